"""The acceptance gate: Gate protocol and the per-category non-regression gate against S0."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol

# Absorbs float noise in (1 − ε)·PR so that a child equal to S0 passes with ε = 0.
_SLACK = 1e-12


@dataclass(frozen=True)
class CategoryCheck:
    """The gate's verdict on one category. Rates are 0..1; `floor` = (1 − ε)·baseline."""

    category: str
    baseline: float
    child: float | None
    floor: float
    passed: bool


@dataclass(frozen=True)
class GateVerdict:
    """Result of a gate: `passed` overall and one `CategoryCheck` per category (sorted by name)."""

    passed: bool
    checks: list[CategoryCheck] = field(default_factory=list)
    tolerance: float = 0.0

    def failed_categories(self) -> list[str]:
        """Names of the categories that fell below their floor."""
        return [c.category for c in self.checks if not c.passed]

    def summary(self) -> str:
        """One line for commit messages and tables, e.g. `pass (ε=0.05, 4 categories)`."""
        if self.passed:
            return f"pass (ε={self.tolerance:g}, {len(self.checks)} categories)"
        return f"fail (ε={self.tolerance:g}): below floor in " + ", ".join(self.failed_categories())

    def to_json(self) -> dict:
        """Plain-JSON form stored in run state and git notes."""
        return {
            "passed": self.passed,
            "tolerance": self.tolerance,
            "checks": [vars(c) for c in self.checks],
        }


class Gate(Protocol):
    """Decides whether an evaluated child may join the candidate pool.

    Contract: `check` is pure (no I/O, inputs not mutated); both mappings are category → pass
    rate in 0..1 measured on the same evaluation set; `baseline` is always the run's starting
    skill set S0, never the parent, so regressions cannot accumulate over generations.
    """

    def check(self, baseline: Mapping[str, float], child: Mapping[str, float]) -> GateVerdict:
        """Return the verdict; never raises on missing categories (a missing one fails)."""
        ...


@dataclass(frozen=True)
class PerCategoryGate:
    """FRAMES gate (arXiv 2608.01772): for every category c, PR_c(child) ≥ (1 − ε)·PR_c(S0).

    Attributes:
        tolerance: ε in 0..1, relative to S0's rate (0.05 = may lose 5 % of S0's rate).
    """

    tolerance: float

    def check(self, baseline: Mapping[str, float], child: Mapping[str, float]) -> GateVerdict:
        """Check every category of `baseline`; a category the child was not scored on fails.

        Categories only the child has (cases added after S0 was scored cannot occur within one
        run) have no floor and are not checked.
        """
        checks = []
        for category in sorted(baseline):
            floor = (1.0 - self.tolerance) * baseline[category]
            rate = child.get(category)
            passed = rate is not None and rate >= floor - _SLACK
            checks.append(CategoryCheck(category, baseline[category], rate, floor, passed))
        return GateVerdict(all(c.passed for c in checks), checks, self.tolerance)
