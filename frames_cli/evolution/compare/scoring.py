"""A candidate's scores on one set of cases (diagnosis, selection or test), from its per-case results."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Scores:
    """Pass rates and cost of one candidate on one set of cases.

    Attributes:
        pass_rate: passing results / results over the set (case × sample), 0..1, as
            `EvalReport.pass_rate`; None when the set holds no evaluated case.
        per_category: category → pass rate, categories sorted.
        mean_tokens: mean prompt + completion tokens per case and sample over the set (None when
            the results carry no token counts: runs recorded before frames kept them).
        cases: distinct cases scored.
        lost: results of the set whose answer was lost (counted in nothing above).
    """

    pass_rate: float | None
    per_category: dict[str, float] = field(default_factory=dict)
    mean_tokens: float | None = None
    cases: int = 0
    lost: int = 0

    def to_json(self) -> dict:
        """Plain JSON: {"pass_rate", "per_category", "mean_tokens", "cases", "lost"}."""
        return asdict(self)


def score(results: Sequence[dict], case_ids: Iterable[str]) -> Scores:
    """The scores of the per-case `results` (context.Evaluation.results: dicts with case_id, category,
    passed and, since held-out sets exist, tokens) restricted to `case_ids`.

    Same formulas as evaluation/runner.EvalReport: a rate is passing results over results, every
    sample counted; mean tokens is the mean over the same results. Results marked `lost` (their
    answer never arrived) are counted in `lost` only.
    """
    wanted = set(case_ids)
    chosen = [r for r in results if r["case_id"] in wanted]
    lost = sum(1 for r in chosen if r.get("lost"))
    chosen = [r for r in chosen if not r.get("lost")]
    if not chosen:
        return Scores(None, lost=lost)
    groups: dict[str, list[dict]] = {}
    for r in chosen:
        groups.setdefault(r["category"], []).append(r)
    per_category = {cat: _rate(groups[cat]) for cat in sorted(groups)}
    tokens = [r["tokens"] for r in chosen if "tokens" in r]
    mean_tokens = sum(tokens) / len(tokens) if len(tokens) == len(chosen) else None
    return Scores(_rate(chosen), per_category, mean_tokens, len({r["case_id"] for r in chosen}), lost)


def _rate(results: Sequence[dict]) -> float:
    return sum(1 for r in results if r["passed"]) / len(results)
