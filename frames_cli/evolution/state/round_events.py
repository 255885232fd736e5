"""The steps of a round an evolve run reports: one frozen dataclass each, `str()` its "round N: …" line.

Part of the run's typed events (state/events.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True)
class RoundEvent(ABC):
    """A step of round `round`: its line is "round N: " and the step's own words."""

    round: int

    def __str__(self) -> str:
        return f"round {self.round}: {self.words()}"

    @abstractmethod
    def words(self) -> str:
        """The line after "round N: "."""


@dataclass(frozen=True)
class RoundParent(RoundEvent):
    """The round's parent, chosen from the front."""

    parent: str

    def words(self) -> str:
        return f"parent {self.parent}"


@dataclass(frozen=True)
class RoundBatches(RoundEvent):
    """How the parent's failures were batched for the diagnosers (propose/diagnose.batching_note)."""

    batching: str

    def words(self) -> str:
        return f"batches {self.batching}"


@dataclass(frozen=True)
class ProposalsDropped(RoundEvent):
    """Proposals the guards dropped before the vote; `first` is the first one's reason, shortened."""

    count: int
    first: str

    def words(self) -> str:
        more = f" (and {self.count - 1} more; `frames review` lists them)" if self.count > 1 else ""
        return f"dropped {self.count} proposal(s) before the vote: {self.first}{more}"


@dataclass(frozen=True)
class CostRound(RoundEvent):
    """A cost-directed round: why (`note`) and the costliest skills it condenses."""

    note: str
    condensing: tuple[str, ...]

    def words(self) -> str:
        return f"{self.note}; condensing {', '.join(self.condensing) or 'nothing'}"


@dataclass(frozen=True)
class LabelConfirmed(RoundEvent):
    """A diagnoser disputes a case's label a person confirmed: the label stays."""

    diagnoser: int
    case: str

    def words(self) -> str:
        return f"diagnoser {self.diagnoser} disputes the label of {self.case}; a person confirmed it: it stays"


@dataclass(frozen=True)
class LabelDisputed(RoundEvent):
    """A diagnoser disputes a case's label: the case leaves the gate and the front."""

    case: str
    diagnoser: int

    def words(self) -> str:
        return (f"{self.case} disputed by diagnoser {self.diagnoser} (its expected result contradicts the policy); "
                "it leaves the gate and the front until `label: confirmed` or `disputed` is set in its case file")


@dataclass(frozen=True)
class EvaluatingChild(RoundEvent):
    """The round's child, which changes `skills` of its parent, is evaluated."""

    candidate: str
    skills: tuple[str, ...]

    def words(self) -> str:
        return f"evaluating {self.candidate} (changes {', '.join(self.skills)})"


@dataclass(frozen=True)
class EvaluatingSubChild(RoundEvent):
    """A sub-child, `child` without the rewrites of `without`, is evaluated."""

    candidate: str
    child: str
    without: tuple[str, ...]

    def words(self) -> str:
        return f"evaluating {self.candidate} ({self.child} without {', '.join(self.without)})"


@dataclass(frozen=True)
class Gated(RoundEvent):
    """A child's or sub-child's gate verdict (`summary`: compare/verdict.GateVerdict.summary)."""

    candidate: str
    passed: bool
    summary: str

    def words(self) -> str:
        return f"{self.candidate} gate {self.summary}"


@dataclass(frozen=True)
class NoChild(RoundEvent):
    """The round made no child to evaluate, and why."""

    reason: str

    def words(self) -> str:
        return f"no child ({self.reason})"


@dataclass(frozen=True)
class AttributionStep(RoundEvent):
    """A failed child's broken cases attributed to the rewrites they loaded (round/attribution.Attribution.note)."""

    note: str

    def words(self) -> str:
        return f"attribution {self.note}"


@dataclass(frozen=True)
class SubChildTwin(RoundEvent):
    """The sub-child without `without` equals an existing candidate: not evaluated."""

    without: tuple[str, ...]
    twin: str

    def words(self) -> str:
        return f"the sub-child without {', '.join(self.without)} is identical to {self.twin}"
