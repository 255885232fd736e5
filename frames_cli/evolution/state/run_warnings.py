"""The warnings of an evolve run: lines a person must see even when `frames evolve --json` prints JSON.

Part of the run's typed events (state/events.py): a consumer tells a warning by its type
(`isinstance(event, RunWarning)`), never by its words. Where the words belong to a lower module
that other commands print too, the event holds that module's inputs and renders through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from frames_cli.evolution.compare.gate import SmallCategory
    from frames_cli.formats.problems import Problem


@dataclass(frozen=True)
class RunWarning:
    """A line a person must see even when the run's output is JSON (printed on stderr)."""


@dataclass(frozen=True)
class InputLeftOut(RunWarning):
    """A workspace input that fails its checks and is left out of the run."""

    problem: Problem

    def __str__(self) -> str:
        return f"warning: {self.problem.location}: {self.problem.message}; left out"


@dataclass(frozen=True)
class SkillsLeftOut(RunWarning):
    """Skills of the base commit that do not load: S0 is the `loaded` others."""

    problems: tuple[Problem, ...]
    loaded: int

    def __str__(self) -> str:
        from frames_cli.formats.skill_set import left_out_message

        return left_out_message(list(self.problems), self.loaded)


@dataclass(frozen=True)
class SkillsDrift(RunWarning):
    """skills/ in the working tree differs from the base commit: one phrase per kind ("edited: a, b")."""

    base: str
    drift: tuple[str, ...]

    def __str__(self) -> str:
        return (f"warning: skills/ in the working tree differs from the base commit {self.base[:12]} that this run "
                f"reads ({'; '.join(self.drift)}): commit the skills for the run to see them")


@dataclass(frozen=True)
class CategoriesKeptWhole(RunWarning):
    """Categories too small to split (category, diagnosis-set size): their gate scores are in-sample."""

    sizes: tuple[tuple[str, int], ...]
    min_cases: int

    def __str__(self) -> str:
        many = len(self.sizes) > 1
        return (f"warning: {len(self.sizes)} categor{'ies' if many else 'y'} too small to split (fewer than "
                f"{self.min_cases} cases, or none would be held out) {'are' if many else 'is'} kept whole, so "
                f"{'their' if many else 'its'} gate and front scores are in-sample: "
                + ", ".join(f"{cat} ({n})" for cat, n in self.sizes))


@dataclass(frozen=True)
class SmallCategories(RunWarning):
    """Gated categories too small for the gate to judge (evolution/compare/gate.py)."""

    small: tuple[SmallCategory, ...]
    samples: int
    rule: str
    sequential: bool

    def __str__(self) -> str:
        from frames_cli.evolution.compare.gate import small_categories_warning

        return small_categories_warning(list(self.small), self.samples, self.rule, self.sequential) or ""


@dataclass(frozen=True)
class RunChangedSince(RunWarning):
    """Settings or cases that changed since the resumed run started (it goes on as it started)."""

    run_id: str
    changed: tuple[str, ...]

    def __str__(self) -> str:
        return (f"warning: {', '.join(self.changed)} changed since run {self.run_id} started; it goes on as it "
                "started, and the next `frames evolve` after it finishes uses the new ones")


@dataclass(frozen=True)
class GuardRulesChanged(RunWarning):
    """The guards' rules version differs from the one the resumed run started with."""

    run_id: str
    then: int
    now: int

    def __str__(self) -> str:
        return (f"warning: the guards' rules changed since run {self.run_id} started (rules {self.then} → {self.now}, "
                "docs/decisions/0072-guards-measured-on-real-text.md); its next rounds drop proposals by the new "
                "rules, and its earlier rounds kept what the old ones let through")


@dataclass(frozen=True)
class PendingSkipped(RunWarning):
    """A pending branch whose base or member commit is gone: not looked at."""

    branch: str | None
    run_id: str
    error: str

    def __str__(self) -> str:
        return f"warning: pending branch {self.branch} of run {self.run_id} cannot be looked at ({self.error}); skipped"


@dataclass(frozen=True)
class BranchMoved(RunWarning):
    """A withdrawn review branch someone moved: left as it is."""

    branch: str
    member: str | None

    def __str__(self) -> str:
        return (f"warning: branch {self.branch} no longer points at {self.member}: someone moved it, "
                "so it is left as it is")
