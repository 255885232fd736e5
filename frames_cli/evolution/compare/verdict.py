"""The gate's values: a case's outcome (`CaseOutcome`), the verdict on a category (`CategoryCheck`) and on a
child (`GateVerdict`, with its JSON form), and the phrases that tell what decided one (`gate_detail`).

The rule that produces them is evolution/compare/gate.py; the sequential gate
(evolution/compare/sequential.py) and early rejection (evolution/compare/early.py) record in a verdict
how they drew its samples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

#: Absorbs float noise in (1 − ε)·PR so that a child equal to S0 passes with ε = 0.
SLACK = 1e-12


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
        return self.child is None or self.child < self.floor - SLACK


@dataclass(frozen=True)
class GateVerdict:
    """Result of a gate: `passed` overall, one `CategoryCheck` per category (sorted by name), and
    the must-pass cases the child broke (those reject whatever the rates say).

    Attributes:
        rule: "paper" or "noise-aware"; alpha: the family-wise error rate of the noise-aware rule.
        early_stop: set by evolution/compare/early.py when the child was rejected before its evaluation
            ended: {"evaluated": cases run, "skipped": [case ids], "reason": text}; None otherwise.
        sequential: set by evolution/compare/sequential.py and sequential_draw.py when the gate may draw more samples:
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
               and c["child"] < c["floor"] - SLACK]
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
