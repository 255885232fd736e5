"""The Pareto front over (pass rate, −mean tokens per case): dominance, ties and duplicates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Pass rates are ratios of small counts and token means are averages of integers; values that
# differ only by float noise (0.1 + 0.2 vs 0.3) must count as equal, or a candidate could "beat"
# its twin by rounding error and keep the search alive.
_RATE_DIGITS = 9
_TOKEN_DIGITS = 6


@dataclass(frozen=True)
class FrontPoint:
    """One evaluated candidate as the front sees it.

    Attributes:
        key: candidate id (for example "c3").
        pass_rate: overall pass rate on the evaluation set, 0..1 (higher is better).
        mean_tokens: mean prompt + completion tokens per case (lower is better).
        order: creation order in the run; lower = older. Breaks ties (see `pareto_front`).
    """

    key: str
    pass_rate: float
    mean_tokens: float
    order: int

    def objectives(self) -> tuple[float, float]:
        """(pass rate, −mean tokens), rounded so float noise does not decide dominance."""
        return (round(self.pass_rate, _RATE_DIGITS), -round(self.mean_tokens, _TOKEN_DIGITS))


def dominates(a: FrontPoint, b: FrontPoint) -> bool:
    """True when `a` is at least as good as `b` on both objectives and strictly better on one."""
    oa, ob = a.objectives(), b.objectives()
    return oa[0] >= ob[0] and oa[1] >= ob[1] and oa != ob


def pareto_front(points: Sequence[FrontPoint]) -> list[FrontPoint]:
    """The non-dominated subset of `points`, sorted by pass rate (best first), then tokens.

    Ties: two points with equal objectives (after rounding) do not dominate each other, but the
    front keeps only the older one (lowest `order`, then `key`). A later candidate that merely
    matches an existing member brings nothing new to a reviewer and must not reset the
    patience counter; keeping the older one also makes the front independent of the order in
    which points are listed. Exact duplicates (same key listed twice) count once.

    Returns:
        New list; `points` is not changed.
    """
    unique = {p.key: p for p in sorted(points, key=lambda p: (p.order, p.key), reverse=True)}
    candidates = sorted(unique.values(), key=lambda p: (p.order, p.key))
    front: list[FrontPoint] = []
    seen: set[tuple[float, float]] = set()
    for p in candidates:
        if p.objectives() in seen:
            continue
        if any(dominates(q, p) for q in candidates):
            continue
        seen.add(p.objectives())
        front.append(p)
    return sorted(front, key=lambda p: (-p.objectives()[0], -p.objectives()[1], p.order))
