"""The acceptance gate: a child against S0 case by case, per category, by the paper's rule or the noise-aware one.

Both rules keep the FRAMES floor check, PR_c(child) ≥ (1 − ε)·PR_c(S0) for every category c
(arXiv 2608.01772). The noise-aware rule rejects a category only when, besides falling below its
floor, the data show a drop: Bonferroni gives each of the m categories of S0 a level of α / m, and
a category's level goes to two tests of evolution/compare/paired_test.py, half each: the exact stratified
test of the category's net drop (`upper_p_value`), and, for each of its n cases, the unconditional
test that this one case broke (`broken_case_p_value` at α / (2·m·n)). The second half goes to the
net test too when no single case could reach its share at this k (known before any model call,
from n, k and m alone). One flip of a noisy case explains no rejection; a drop the data show, even
one that gains on other cases of the category hide, is not accepted. Must-pass cases reject under
either rule. The choice and its sources are in docs/decisions/0026-gate-compares-cases.md and
0043-noise-aware-gate-per-case.md. Its values (the outcomes it compares, the verdicts it returns) are in
evolution/compare/verdict.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from frames_cli.formatting import plural
from frames_cli.evolution.compare.paired_test import (
    broken_case_p_value,
    cases_needed,
    smallest_broken_case_p,
    upper_p_value,
)
from frames_cli.evolution.compare.verdict import SLACK, CaseOutcome, CategoryCheck, GateVerdict, Outcomes

#: The rules `evolution.gate` may name.
GATE_RULES = ("paper", "noise-aware")


class Gate(Protocol):
    """Decides whether an evaluated child may join the candidate pool.

    Contract: `check` is pure (no I/O, inputs not mutated); both mappings are case id → outcome on
    the same evaluation set and samples; `baseline` is always the run's starting skill set S0,
    never the parent, so regressions cannot accumulate over generations. The verdict may only get
    better when a child passes more samples (early rejection relies on it).
    """

    def check(self, baseline: Outcomes, child: Outcomes) -> GateVerdict:
        """Return the verdict; never raises on missing cases (a case the child lacks counts as failed)."""
        ...


@dataclass(frozen=True)
class PerCategoryGate:
    """The gate of frames: the FRAMES per-category floor, case-level flips, and must-pass cases.

    Attributes:
        tolerance: ε in 0..1, relative to S0's rate (0.05 = may lose 5 % of S0's rate).
        rule: "paper" (the floor alone decides) or "noise-aware" (the floor and the exact test).
        alpha: noise-aware only: the chance, over all categories, of rejecting a child as good as S0.
        family: noise-aware only: m, the number of categories `alpha` is shared among (Bonferroni);
            0 = the categories of the baseline checked. The sequential gate (evolution/compare/sequential.py)
            checks some categories at a later look and sets it to all of S0's.
    """

    tolerance: float
    rule: str = "paper"
    alpha: float = 0.05
    family: int = 0

    def __post_init__(self) -> None:
        if self.rule not in GATE_RULES:
            raise ValueError(f"unknown gate rule {self.rule!r} (known: {', '.join(GATE_RULES)})")

    def check(self, baseline: Outcomes, child: Outcomes) -> GateVerdict:
        """Check every category of `baseline` on its cases; categories only the child has are not checked.

        Raises:
            ValueError: a case has a different number of samples in the two outcomes.
        """
        by_category: dict[str, list[str]] = {}
        for cid, outcome in baseline.items():
            by_category.setdefault(outcome.category, []).append(cid)
        m = max(1, self.family or len(by_category))
        checks = [self._category(cat, sorted(ids), baseline, child, m) for cat, ids in sorted(by_category.items())]
        broken = sorted(
            cid for cid, base in baseline.items()
            if (base.must_pass or (cid in child and child[cid].must_pass)) and _passes(child, cid, base) < base.passed
        )
        passed = all(c.passed for c in checks) and not broken
        return GateVerdict(passed, checks, self.tolerance, self.rule, self.alpha, broken)

    def _category(self, category: str, ids: list[str], baseline: Outcomes, child: Outcomes, m: int) -> CategoryCheck:
        k = len(baseline[ids[0]].passes)
        strata = []
        for cid in ids:
            if len(baseline[cid].passes) != k or (cid in child and len(child[cid].passes) != k):
                raise ValueError(f"case {cid}: the gate compares equal numbers of samples (k = {k})")
            strata.append((baseline[cid].passed, _passes(child, cid, baseline[cid])))
        base_rate = sum(a for a, _ in strata) / (k * len(ids))
        seen = any(cid in child for cid in ids)
        child_rate = sum(b for _, b in strata) / (k * len(ids)) if seen else None
        floor = (1.0 - self.tolerance) * base_rate
        below = child_rate is None or child_rate < floor - SLACK
        p = upper_p_value(strata, k)
        level, case_level = noise_levels(len(ids), k, m, self.alpha)
        case_ps = [broken_case_p_value(a, b, k) for a, b in strata]
        broken = [cid for cid, q in zip(ids, case_ps) if q <= case_level]
        if not below:
            passed, why = True, "at or above the floor"
        elif child_rate is None:
            passed, why = False, "no result in this category"
        elif self.rule == "paper":
            passed, why = False, "below the floor"
        elif p <= level:
            passed, why = False, f"below the floor and a significant drop (p = {p:.2g} ≤ {level:.2g})"
        elif broken:
            passed, why = (
                False, f"below the floor and case {broken[0]} broke (p = {min(case_ps):.2g} ≤ {case_level:.2g})",
            )
        else:
            passed, why = True, f"below the floor, but noise explains it (p = {p:.2g} > {level:.2g})"
        needed = cases_to_judge(len(ids), k, m, self.alpha)
        return CategoryCheck(
            category, base_rate, child_rate, floor, passed, len(ids), k,
            pass_to_fail=[cid for cid, (a, b) in zip(ids, strata) if b < a],
            fail_to_pass=[cid for cid, (a, b) in zip(ids, strata) if b > a],
            p_value=p, case_p_value=min(case_ps), broken=broken, level=level, case_level=case_level,
            too_small=needed > 0, needed=needed, why=why,
        )


def noise_levels(n: int, k: int, m: int, alpha: float) -> tuple[float, float]:
    """(level of the net-drop test, level of each one-case test) of a category of `n` cases at `k`
    samples among `m` categories, for the noise-aware rule at family-wise error `alpha`.

    The category's α / m is halved between the two tests (Bonferroni: α / 2m for the net test,
    α / 2mn for each case) when a case could reach its share at all (4^−k ≤ α / 2mn); otherwise the
    net test has all of it and the one-case level is 0. Depends on n, k and m only, so it is fixed
    before any model call and the rule stays monotone in the child's passes.
    """
    share = alpha / max(1, m)
    case = share / (2 * max(1, n))
    if smallest_broken_case_p(k) <= case:
        return share / 2, case
    return share, 0.0


def _judgeable(n: int, k: int, m: int, alpha: float) -> bool:
    """Whether either test of `noise_levels` can ever reach its level (S0 passing every sample, the child none)."""
    level, case_level = noise_levels(n, k, m, alpha)
    return case_level > 0 or n >= cases_needed(k, level)


def cases_to_judge(n: int, k: int, m: int, alpha: float) -> int:
    """0 when a category of `n` cases can be judged at k samples among m categories; else the fewest
    cases above n at which it can (the net test at α / 2m is always reached by then)."""
    if _judgeable(n, k, m, alpha):
        return 0
    bound = max(n + 1, cases_needed(k, alpha / max(1, m) / 2))
    return next(size for size in range(n + 1, bound + 1) if _judgeable(size, k, m, alpha))


def _passes(child: Outcomes, cid: str, base: CaseOutcome) -> int:
    """The child's passes on case `cid` (0 when it has no result for it)."""
    return child[cid].passed if cid in child else 0


@dataclass(frozen=True)
class SmallCategory:
    """A category too small for the exact test to ever show a drop: `n` cases, `needed` at k samples."""

    category: str
    n: int
    needed: int


def too_small_categories(categories: Mapping[str, int], samples: int, alpha: float,
                         looks: Sequence[tuple[int, float]] = ()) -> list[SmallCategory]:
    """The categories (name → number of cases) in which the noise-aware rule can never show a drop
    with `samples` per case among m = len(categories) categories (`cases_to_judge`), sorted by name.

    With `looks` ((samples per case, α spent) of each look of the sequential gate,
    evolution/compare/sequential.py) a category is too small when no look can judge it, and `needed` is
    the fewest cases at which one could. Known before any model call: the bound is S0 passing
    every sample and the child none.
    """
    m = len(categories)
    plan = list(looks) or [(samples, alpha)]
    small = ((cat, n, min(cases_to_judge(n, k, m, a) for k, a in plan)) for cat, n in sorted(categories.items()))
    return [SmallCategory(cat, n, needed) for cat, n, needed in small if needed]


def small_categories_warning(
    small: list[SmallCategory], samples: int, rule: str, sequential: bool = False
) -> str | None:
    """One warning line naming every too-small category and the cases it needs; None when there are none.

    `samples` is k, or with `sequential` the most samples per case the sequential gate may draw."""
    if not small:
        return None
    names = ", ".join(f"{s.category} ({plural(s.n, 'case')}, needs {s.needed})" for s in small)
    consequence = (
        "the noise-aware gate cannot show a drop in them, so only must-pass cases can reject a child there"
        if rule == "noise-aware"
        else "one flip of a noisy case can decide their verdict"
    )
    at = (
        f"even at up to k = {samples} samples (the sequential gate's last look)"
        if sequential
        else f"at k = {samples} sample(s)"
    )
    raise_what = "evolution.gate_max_samples" if sequential else "eval.samples"
    return (
        f"warning: categories too small to judge {at}: {names}; {consequence}. Add cases to them or raise {raise_what}"
    )

