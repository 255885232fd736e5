"""`evaluate_staged`: `evaluate` in a chosen order, batch by
batch, stopping as soon as a rule says the outcome is decided."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from frames_cli.evaluation.runner import CaseResult, EvalReport, Progress, evaluate

if TYPE_CHECKING:
    from frames_cli.executor.base import Executor
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.llm.client.client import ModelClient

#: (results so far, ids of the cases not evaluated yet) → why the evaluation may stop, or None.
StopRule = Callable[[list[CaseResult], list[str]], "str | None"]
#: (results so far, ids of the cases not evaluated yet) → those ids in the order to evaluate them next.
OrderRule = Callable[[list[CaseResult], list[str]], list[str]]


@dataclass(frozen=True)
class Staging:
    """How to evaluate in stages.

    Attributes:
        order: asked before each batch: the pending cases in the order to evaluate them (the next
            batch is its head), so the order can follow the results so far.
        stop: asked after each batch; a reason ends the evaluation there.
        batch: cases per batch (all their samples are evaluated together).
        settle: asked once when `stop` gave a reason: the pending cases to evaluate anyway (what
            the records of a stopped evaluation need), in the order to evaluate them; None: none.
    """

    order: OrderRule
    stop: StopRule
    batch: int
    settle: OrderRule | None = None


@dataclass
class StagedOutcome:
    """The report of the cases evaluated, and why the rest were not.

    Attributes:
        report: results of the evaluated cases, in the evaluation's case order then sample order
            (with nothing skipped, exactly `evaluate`'s report).
        skipped: ids of the cases not evaluated, in evaluation order ([] when the evaluation ran to the end).
        reason: the stop rule's reason ("" when nothing was skipped).
        settled: ids of the cases `staging.settle` had evaluated after the stop, in evaluation order.
    """

    report: EvalReport
    skipped: list[str] = field(default_factory=list)
    reason: str = ""
    settled: list[str] = field(default_factory=list)


def evaluate_staged(
    cases: Sequence[Case],
    skills: SkillSet,
    executor: Executor,
    staging: Staging,
    *,
    samples: int = 1,
    judge: ModelClient | None = None,
    progress: Progress | None = None,
    lost_retries: int = 0,
) -> StagedOutcome:
    """Evaluate `cases` in the order `staging.order` gives,
    `staging.batch` cases at a time, until `staging.stop` gives a reason.

    Every result is the one `evaluate` gives for that case and sample (each batch is an `evaluate`
    call), so a staged evaluation that runs to the end has the same report, results in case order.
    The rule is asked after every batch but the last (after the last, nothing is left to save).
    Once it stops, the cases `staging.settle` names are evaluated too (one more `evaluate` call).
    Each batch runs its lost cases again up to `lost_retries` times, as `evaluate` does.

    Raises:
        ValueError: duplicate case ids, `staging.order` returned other ids than the pending ones
            (or `staging.settle` ids that are not pending),
            `batch` < 1, or as `evaluate`.
        BudgetExceeded: from the model layer.
    """
    by_id = {c.id: c for c in cases}
    if len(by_id) != len(cases):
        raise ValueError("the case ids of an evaluation must be unique")
    if staging.batch < 1:
        raise ValueError("batch must be at least 1")
    results: list[CaseResult] = []
    total = len(cases) * samples
    pending, skipped, reason, settled = [c.id for c in cases], [], "", []
    while pending:
        ordered = staging.order(results, pending)
        if sorted(ordered) != sorted(pending):
            raise ValueError("the staging order must list every pending case once")
        ids, pending = ordered[: staging.batch], ordered[staging.batch :]
        done = len(results)
        step = (lambda d, _t, done=done: progress(done + d, total)) if progress else None
        results += evaluate(
            [by_id[c] for c in ids], skills, executor, samples=samples, judge=judge, progress=step,
            lost_retries=lost_retries,
        ).results
        if pending:
            why = staging.stop(results, pending)
            if why:
                settled = staging.settle(results, pending) if staging.settle else []
                if not set(settled) <= set(pending) or len(set(settled)) != len(settled):
                    raise ValueError("the settle rule must name pending cases, each once")
                if settled:
                    results += evaluate([by_id[c] for c in settled], skills, executor, samples=samples, judge=judge,
                                        lost_retries=lost_retries).results
                skipped, reason = [c for c in pending if c not in set(settled)], why
                break
    position = {c.id: i for i, c in enumerate(cases)}
    results.sort(key=lambda r: (position[r.case_id], r.sample))
    left, extra = set(skipped), set(settled)
    return StagedOutcome(EvalReport(results, samples), [c.id for c in cases if c.id in left], reason if skipped else "",
                         [c.id for c in cases if c.id in extra])
