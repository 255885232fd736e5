"""A candidate's scores and the run's front: the figures per set, the gain's p-value against S0, the
point each candidate is on the Pareto front, and the front itself.

`score_candidate` fills in the scoring fields of a `Candidate` record (the run state's own, changed in
place: the caller saves it); `front_ids` computes the front without writing it (the commit stage
records and publishes it). Nothing here reads a file but through the candidate store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frames_cli.evolution.compare.evidence import gain_p_value
from frames_cli.evolution.compare.front import FrontPoint, pareto_front
from frames_cli.evolution.compare.verdict import outcomes_from_results
from frames_cli.evolution.compare.scoring import score
from frames_cli.evolution.state.run_ids import BASE_ID

if TYPE_CHECKING:
    from frames_cli.evolution.round.context import Evaluation
    from frames_cli.evolution.round.outcomes import RunOutcomes
    from frames_cli.evolution.state.records import Candidate, RunState


def score_candidate(cand: Candidate, ev: Evaluation, view: RunOutcomes, samples: int) -> None:
    """Score `cand` on the diagnosis and the selection set, disputed cases left out; its headline
    figures (what the gate and the front use) are the selection set's. `samples` is `eval.samples`."""
    excluded = view.excluded
    for name in ("diagnosis", "selection"):
        cand.sets[name] = score(ev.results, [c for c in view.split.ids(name) if c not in excluded]).to_json()
    chosen = cand.sets["selection"]
    cand.pass_rate, cand.per_category = chosen["pass_rate"], dict(chosen["per_category"])
    cand.mean_tokens = ev.mean_tokens if chosen["mean_tokens"] is None else chosen["mean_tokens"]
    cand.cost_usd = ev.cost_usd
    cand.lost = sum(1 for r in ev.results if r.get("lost"))
    selected = set(view.split.selection) - excluded
    cases: dict[str, set[str]] = {}
    for r in ev.results:
        if r["case_id"] in selected and not r.get("lost"):
            cases.setdefault(r["category"], set()).add(r["case_id"])
    cand.case_counts = {cat: len(ids) for cat, ids in sorted(cases.items())}
    cand.samples = samples
    # A child rejected early was not scored on every case: no gain to test (and it is off the front).
    cand.gain_p = None if cand.parent_id is None or ev.early_stop else _gain_p(ev, view, samples)


def _gain_p(ev: Evaluation, view: RunOutcomes, samples: int) -> float:
    """The child of evaluation `ev` against S0 on the selection cases no diagnoser saw
    (evidence.gain_p_value); a case lost on either side is compared on neither."""
    lost = view.lost(BASE_ID) | {r["case_id"] for r in ev.results if r.get("lost")}
    # A diagnosed case is rewritten for because S0 failed it: re-drawn, it regresses to its
    # mean, a gain the exact test would count as real (evidence.py).
    gated = set(view.split.selection) - set(view.split.diagnosis) - view.excluded - lost
    child = outcomes_from_results(r for r in ev.results if r["case_id"] in gated)
    return gain_p_value(view.selection(BASE_ID, lost), child, samples)


def point(state: RunState, c: Candidate) -> FrontPoint:
    """Candidate `c` as a point of the Pareto front: pass rate (0..1) on the selection set, mean
    tokens per case, and its creation order (0 for S0); an unscored candidate counts as 0."""
    return FrontPoint(c.id, c.pass_rate or 0.0, c.mean_tokens or 0.0, state.candidates.index(c))


def front_ids(state: RunState) -> list[str]:
    """The front over S0 and the accepted children, in creation order (the order the round-robin
    selector cycles)."""
    accepted = [c for c in state.candidates if c.parent_id is None or c.gate_passed]
    front = pareto_front([point(state, c) for c in accepted])
    return [p.key for p in sorted(front, key=lambda p: p.order)]
