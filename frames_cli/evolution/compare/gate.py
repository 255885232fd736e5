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
0043-noise-aware-gate-per-case.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol

from frames_cli.formatting import plural
from frames_cli.evolution.compare.paired_test import (
    broken_case_p_value,
    cases_needed,
    smallest_broken_case_p,
    upper_p_value,
)

# Absorbs float noise in (1 − ε)·PR so that a child equal to S0 passes with ε = 0.
_SLACK = 1e-12
#: The rules `evolution.gate` may name.
GATE_RULES = ("paper", "noise-aware")


@dataclass(frozen=True)
class CaseOutcome:
    """One case's results in one evaluation.

    Attributes:
        category: the case's category.
        passes: one bool per sample, in sample order (k = len(passes)).
        must_pass: the case file marks it must-pass (itself or its whole category).
    """

    category: str
    passes: tuple[bool, ...]
    must_pass: bool = False

    @property
    def passed(self) -> int:
        """Samples passed (0..k)."""
        return sum(self.passes)


#: case id → its outcome: what the gate compares.
Outcomes = Mapping[str, CaseOutcome]


def outcomes_from_results(
    results: Iterable[Mapping[str, Any]], must_pass: Iterable[str] = ()
) -> dict[str, CaseOutcome]:
    """Per-case outcomes from result records ({case_id, category, sample, passed}, as in context.Evaluation).

    Samples are put in sample order; `must_pass` holds the ids of must-pass cases.
    """
    samples: dict[str, dict[int, bool]] = {}
    categories: dict[str, str] = {}
    for r in results:
        samples.setdefault(r["case_id"], {})[int(r["sample"])] = bool(r["passed"])
        categories[r["case_id"]] = r["category"]
    marked = set(must_pass)
    return {
        cid: CaseOutcome(categories[cid], tuple(by[s] for s in sorted(by)), cid in marked)
        for cid, by in samples.items()
    }


@dataclass(frozen=True)
class CategoryCheck:
    """The gate's verdict on one category.

    Attributes:
        baseline / child: pass rates (0..1) over the category's cases and samples; `child` is None
            when the child has no result in the category.
        floor: (1 − ε)·baseline.
        passed: the category passes under the gate's rule.
        n: cases compared; samples: k per case.
        pass_to_fail / fail_to_pass: ids of cases the child passed in fewer / more samples than S0.
        p_value: one-sided exact p-value of the child being worse than S0 over the category's cases
            (paired_test.upper_p_value).
        case_p_value: the smallest one-case p-value (paired_test.broken_case_p_value) of its cases;
            broken: ids of the cases whose one-case p-value reached `case_level` (the noise-aware
            rule's level per case; 0 when no single case can reach its share at this k).
        level: the level the noise-aware rule holds `p_value` to (α / m, or α / 2m when the
            one-case test has the other half).
        too_small: neither test can ever reach its level here, whatever the child does.
        needed: the fewest cases (more than n) at which one of them could (0 when not too small).
        why: one phrase saying what decided it.
    """

    category: str
    baseline: float
    child: float | None
    floor: float
    passed: bool
    n: int = 0
    samples: int = 1
    pass_to_fail: list[str] = field(default_factory=list)
    fail_to_pass: list[str] = field(default_factory=list)
    p_value: float | None = None
    case_p_value: float | None = None
    broken: list[str] = field(default_factory=list)
    level: float = 0.0
    case_level: float = 0.0
    too_small: bool = False
    needed: int = 0
    why: str = ""

    @property
    def below_floor(self) -> bool:
        """The child's rate is under the floor, or it has no result in the category."""
        return self.child is None or self.child < self.floor - _SLACK


@dataclass(frozen=True)
class GateVerdict:
    """Result of a gate: `passed` overall, one `CategoryCheck` per category (sorted by name), and
    the must-pass cases the child broke (those reject whatever the rates say).

    Attributes:
        rule: "paper" or "noise-aware"; alpha: the family-wise error rate of the noise-aware rule.
        early_stop: set by evolution/compare/early.py when the child was rejected before its evaluation
            ended: {"evaluated": cases run, "skipped": [case ids], "reason": text}; None otherwise.
        sequential: set by evolution/compare/sequential.py when the noise-aware gate may draw more samples:
            {"looks": [samples per case at each look], "alphas": [α spent at each look], "betas": [β
            spent at each look by early acceptance; absent in runs before it],
            "categories": {name: {"samples": k it was decided at, "why": text}}, "drawn": {side:
            case-samples drawn}, and "stopped": {"look": k, "skipped": [case ids not sampled to k],
            "reason": text} when early rejection stopped a look's draws}; None otherwise.
    """

    passed: bool
    checks: list[CategoryCheck] = field(default_factory=list)
    tolerance: float = 0.0
    rule: str = "paper"
    alpha: float = 0.05
    must_pass_broken: list[str] = field(default_factory=list)
    early_stop: dict[str, Any] | None = None
    sequential: dict[str, Any] | None = None

    def failed_categories(self) -> list[str]:
        """Names of the categories the gate rejected."""
        return [c.category for c in self.checks if not c.passed]

    def summary(self) -> str:
        """One line for commit messages and tables, e.g. `pass (ε=0.05, 4 categories)`."""
        head = f"ε={self.tolerance:g}" + (f", noise-aware α={self.alpha:g}" if self.rule == "noise-aware" else "")
        if self.passed:
            further = sampled_further(self.sequential)
            more = (
                "; sampled further: " + ", ".join(f"{c} to k = {s['samples']}" for c, s in further.items()) if further
                else ""
            )
            return f"pass ({head}, {len(self.checks)} categories{more})"
        parts = []
        if self.must_pass_broken:
            parts.append("must-pass case(s) failed: " + ", ".join(self.must_pass_broken))
        if self.failed_categories():
            parts.append("below floor in " + ", ".join(self.failed_categories()))
        text = f"fail ({head}): " + "; ".join(parts)
        further = sampled_further(self.sequential)
        if further:
            text += " (sampled further: " + ", ".join(f"{c} to k = {s['samples']}" for c, s in further.items()) + ")"
        if self.early_stop:
            text += (
                f" (decided after {self.early_stop['evaluated']} cases; {len(self.early_stop['skipped'])} not "
                "evaluated)"
            )
        stopped = (self.sequential or {}).get("stopped")
        if stopped:
            text += f" (decided at k = {stopped['look']} before {len(stopped['skipped'])} case(s) were sampled to it)"
        return text

    def to_json(self) -> dict:
        """Plain-JSON form stored in run state and git notes."""
        out = {
            "passed": self.passed,
            "tolerance": self.tolerance,
            "rule": self.rule,
            "alpha": self.alpha,
            "must_pass_broken": list(self.must_pass_broken),
            "checks": [asdict(c) for c in self.checks],
        }
        if self.early_stop is not None:
            out["early_stop"] = self.early_stop
        if self.sequential is not None:
            out["sequential"] = self.sequential
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> GateVerdict:
        """Inverse of `to_json`; keys it does not know (a round record's `lost_left_out`) are ignored."""
        known = {f.name for f in fields(CategoryCheck)}
        checks = [CategoryCheck(**{k: v for k, v in c.items() if k in known}) for c in obj.get("checks", [])]
        return cls(
            bool(obj["passed"]), checks, obj.get("tolerance", 0.0), obj.get("rule", "paper"), obj.get("alpha", 0.05),
            list(obj.get("must_pass_broken", [])), obj.get("early_stop"), obj.get("sequential"),
        )


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
        below = child_rate is None or child_rate < floor - _SLACK
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


def gate_detail(gate: Mapping[str, Any]) -> str:
    """What decided a verdict (its `to_json()` form, older runs' too), in one phrase for commit
    messages and reviews: the failing categories, the broken must-pass cases, the drops the
    noise-aware rule put down to noise, and an early stop."""
    checks = gate.get("checks", [])
    parts = []
    broken = gate.get("must_pass_broken") or []
    if broken:
        parts.append("must-pass case(s) turned from pass to fail: " + ", ".join(broken))
    failed = [c["category"] for c in checks if not c["passed"]]
    if failed:
        parts.append("below (1 − ε)·S0 in " + ", ".join(failed))
    excused = [f"{c['category']} (p = {c['p_value']:.2g})" for c in checks if c["passed"] and c.get("child") is not None
               and c["child"] < c["floor"] - _SLACK]
    if excused:
        parts.append("below the floor but within noise: " + ", ".join(excused))
    if not failed and not broken:
        parts.insert(0, "every category at or above (1 − ε)·S0" if not excused else "no significant drop")
    further = sampled_further(gate.get("sequential"))
    if further:
        parts.append("sampled further: " + ", ".join(f"{c} (to k = {s['samples']})" for c, s in further.items()))
    early = gate.get("early_stop")
    if early:
        parts.append(f"decided early: {len(early['skipped'])} case(s) not evaluated ({early['reason']})")
    stopped = (gate.get("sequential") or {}).get("stopped")
    if stopped:
        parts.append(f"decided early at k = {stopped['look']}: {len(stopped['skipped'])} case(s) not sampled to it")
    return "; ".join(parts)


def sampled_further(sequential: Mapping[str, Any] | None) -> dict[str, dict]:
    """Category → its record ({"samples", "looks", "why"}) for the categories the sequential gate
    (evolution/compare/sequential.py) sampled beyond the first look; {} when none or not sequential."""
    return {c: s for c, s in sorted(((sequential or {}).get("categories") or {}).items()) if s.get("looks", 1) > 1}
