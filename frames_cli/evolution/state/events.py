"""What an evolve run reports as it goes: one frozen dataclass per kind of event, `str()` its line for people.

`on_event` receives an `Event`. A consumer tells events apart by type, `RunWarning` (run_warnings.py)
for the lines `frames evolve --json` still prints, `RoundEvent` (round_events.py) for a round's
steps, and reads their fields; text is only ever `str(event)`. Where a line's words belong to a
lower module that other commands print too (the estimate, the budget), the event holds that
module's inputs and renders through it, so the words stay in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from frames_cli.evolution.state.round_events import (
    AttributionStep,
    CostRound,
    EvaluatingChild,
    EvaluatingSubChild,
    Gated,
    LabelConfirmed,
    LabelDisputed,
    NoChild,
    ProposalsDropped,
    RoundBatches,
    RoundParent,
    SubChildTwin,
)
from frames_cli.evolution.state.run_warnings import (
    BranchMoved,
    CategoriesKeptWhole,
    GuardRulesChanged,
    InputLeftOut,
    PendingSkipped,
    RunChangedSince,
    RunWarning,
    SkillsDrift,
    SkillsLeftOut,
    SmallCategories,
)

if TYPE_CHECKING:
    from frames_cli.evaluation.estimate import Estimate


# --- the run's start and end ----------------------------------------------------------------------


@dataclass(frozen=True)
class AskingAgain:
    """The latest finished run lost results; a new run asks for them again."""

    run_id: str
    lost: int

    def __str__(self) -> str:
        return f"run {self.run_id} lost {self.lost} result(s) to the model layer; starting a new run to ask again"


@dataclass(frozen=True)
class EndingRebuilt:
    """A finished run's missing report files and branch, rebuilt from its state."""

    run_id: str
    missing: tuple[str, ...]

    def __str__(self) -> str:
        return f"run {self.run_id} ended without {', '.join(self.missing)}: rebuilt from its state"


@dataclass(frozen=True)
class RunStarted:
    """A run starts or resumes on `base`; `sets` describes its case sets (splits.describe_split)."""

    run_id: str
    base: str
    resumed: bool
    sets: str

    def __str__(self) -> str:
        return f"{'resuming' if self.resumed else 'starting'} run {self.run_id} on {self.base[:12]} ({self.sets})"


@dataclass(frozen=True)
class Estimated:
    """A new run's estimate: calls, tokens and price, before the first call."""

    estimate: Estimate

    def __str__(self) -> str:
        return self.estimate.summary()


@dataclass(frozen=True)
class Budget:
    """The estimate's bound beside the budget (`budget.max_tokens`, `budget.max_usd`)."""

    estimate: Estimate
    max_tokens: int | None
    max_usd: float | None

    def __str__(self) -> str:
        from frames_cli.evaluation.estimate import budget_sentence

        return budget_sentence(self.estimate, self.max_tokens, self.max_usd)


@dataclass(frozen=True)
class OverBudget(Budget, RunWarning):
    """The expected spend exceeds the budget: the run will stop when it is spent."""


@dataclass(frozen=True)
class BatchNotice:
    """A batched role's model without a batch API or batch price (the line is llm/transport/batch.py's,
    which `frames eval` prints too)."""

    line: str

    def __str__(self) -> str:
        return self.line


@dataclass(frozen=True)
class PolicyAmended:
    """Policy lines changed under these skills since they were written; diagnosers are shown them."""

    skills: tuple[str, ...]

    def __str__(self) -> str:
        n = len(self.skills)
        return (f"policy amended under {n} skill{'s' if n != 1 else ''} ({', '.join(self.skills)}): "
                "the diagnosers are shown the changed lines")


@dataclass(frozen=True)
class RetrievalLeftOut:
    """A policy document retrieval cannot read (`path[:line]: message`): not indexed."""

    problem: str

    def __str__(self) -> str:
        return f"retrieval: left out {self.problem}"


@dataclass(frozen=True)
class RetrievalEmpty:
    """The base commit has no policy file while the working tree's policies/ has some."""

    base: str
    symlink: bool

    def __str__(self) -> str:
        why = (" is a symlink (git stores the link, not the documents)" if self.symlink
               else " has documents not committed there")
        return (f"retrieval: no policy passage indexed: {self.base[:12]} has no file under policies/, "
                f"whose working-tree folder{why}")



# --- evaluations ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvaluatingBase:
    """S0 is evaluated (the first evaluation of a run)."""

    def __str__(self) -> str:
        return "evaluating S0 (the base commit's skills)"


@dataclass(frozen=True)
class ResultsLost:
    """Results of a candidate's evaluation that stayed lost after `retries` retries (`cases`: their ids, sorted)."""

    candidate: str
    lost: int
    retries: int
    cases: tuple[str, ...]

    def __str__(self) -> str:
        return (f"{self.candidate}: {self.lost} result(s) lost to the model layer after {self.retries} retries "
                f"({', '.join(self.cases[:5])}); left out of its scores and the gate; "
                "the next `frames evolve` asks again")


@dataclass(frozen=True)
class SamplesReused:
    """Samples of S0 the sequential gate took from the sample store instead of drawing them."""

    candidate: str
    samples: int

    def __str__(self) -> str:
        return (f"{self.candidate}: {self.samples} sample(s) of S0 taken from earlier draws on the same skills "
                "and cases (.frames/samples)")


@dataclass(frozen=True)
class SealedScoring:
    """A candidate scored on the sealed test set at the run's end."""

    candidate: str
    cases: int

    def __str__(self) -> str:
        return f"scoring {self.candidate} on the sealed test set ({self.cases} cases)"



# --- the recommendation and pending branches ----------------------------------------------------


@dataclass(frozen=True)
class RecommendationStep:
    """A step of the recommendation that draws samples, in words."""

    step: str

    def __str__(self) -> str:
        return f"recommendation: {self.step}"


@dataclass(frozen=True)
class Recommended:
    """The run's recommendation: a member and its status, or S0 stays (`member` None)."""

    member: str | None
    status: str
    words: str

    def __str__(self) -> str:
        who = f"{self.member} ({self.status})" if self.member else "S0 stays (no review branch)"
        return f"recommendation: {who}: {self.words}"


@dataclass(frozen=True)
class PendingWaiting:
    """An earlier run's pending branch still waits for new cases (`line`: decide/prospective.Wait.line)."""

    line: str

    def __str__(self) -> str:
        return f"pending review branch {self.line}"


@dataclass(frozen=True)
class PendingLook:
    """A pending branch is looked at on `cases` cases added after its run."""

    branch: str | None
    member: str
    cases: int
    run_id: str

    def __str__(self) -> str:
        return (f"looking at pending branch {self.branch} ({self.member}) on {self.cases} cases "
                f"added after run {self.run_id}")


@dataclass(frozen=True)
class PendingLooked:
    """What a look at a pending branch decided, in words."""

    branch: str | None
    member: str
    words: str

    def __str__(self) -> str:
        return f"pending branch {self.branch} ({self.member}): {self.words}"


#: Everything a run reports: what `on_event` receives.
Event: TypeAlias = (
    InputLeftOut | SkillsLeftOut | SkillsDrift | CategoriesKeptWhole | SmallCategories | RunChangedSince
    | GuardRulesChanged | PendingSkipped | BranchMoved | AskingAgain | EndingRebuilt | RunStarted | Estimated
    | Budget | OverBudget | BatchNotice | PolicyAmended | RetrievalLeftOut | RetrievalEmpty | EvaluatingBase
    | ResultsLost | SamplesReused | SealedScoring | RoundParent | RoundBatches | ProposalsDropped | CostRound
    | LabelConfirmed | LabelDisputed | EvaluatingChild | EvaluatingSubChild | Gated | NoChild
    | AttributionStep | SubChildTwin | RecommendationStep | Recommended | PendingWaiting | PendingLook
    | PendingLooked
)
