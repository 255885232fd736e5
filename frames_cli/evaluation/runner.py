"""`evaluate`: run the agent on cases (k samples each), check every answer, and summarise per category."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frames_cli.evaluation.checks import LOCAL_CHECKS, RubricCheck, Verdict
from frames_cli.evaluation.metrics import mean_over_cases, pass_at_k, pass_hat_k
from frames_cli.llm.transport.batch import BatchPending
from frames_cli.llm.messages.types import Usage

if TYPE_CHECKING:
    from frames_cli.executor.base import AgentResult, Executor
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.llm.client.client import ModelClient

#: Called after each chunk of cases with (results done, results in all).
Progress = Callable[[int, int], None]
#: Cases handed to the executor at once: progress is reported after each chunk.
PROGRESS_CHUNK = 256


@dataclass
class CaseResult:
    """One case, one sample.

    Attributes:
        passed: the check passed (False when the agent or the judge failed).
        reason: the check's one-line explanation, or the failure.
        usage: agent and judge tokens and USD for this case and sample.
        error: the agent's or judge's failure (crash, timeout, bad JSON, model error); None otherwise.
        trajectory: the agent's steps, for diagnosis.
        lost: the agent's or the judge's answer was lost (AgentResult.lost, Verdict.lost) on every
            try: the result is neither a pass nor a failure, and no rate counts it.
    """

    case_id: str
    category: str
    sample: int
    passed: bool
    reason: str
    output: Any = None
    skills_used: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    lost: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: every field, `usage` as {prompt_tokens, completion_tokens, cost_usd}."""
        return {
            "case_id": self.case_id, "category": self.category, "sample": self.sample, "passed": self.passed,
            "reason": self.reason, "output": self.output, "skills_used": self.skills_used,
            "usage": self.usage.to_dict(), "error": self.error, "trajectory": self.trajectory, "lost": self.lost,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CaseResult:
        """Rebuild a result from `to_dict` output (a missing `usage` counts as zero tokens)."""
        return cls(**{**d, "usage": Usage.from_dict(d.get("usage") or {})})


@dataclass
class CategoryStats:
    """Results of one category (or of all cases).

    Attributes:
        n_cases: distinct cases with at least one answered result; n_results: answered results
            (cases × samples, lost ones left out); passed: passing results.
        pass_rate: passed / n_results (0..1).
        pass_at_k / pass_hat_k: mean over cases with all k samples answered, k = the number of
            samples; None when k = 1.
        lost: results whose answer was lost (CaseResult.lost), counted in no other field.
    """

    n_cases: int
    n_results: int
    passed: int
    pass_rate: float
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    lost: int = 0


def _stats(results: Sequence[CaseResult], k: int) -> CategoryStats:
    lost = sum(1 for r in results if r.lost)
    results = [r for r in results if not r.lost]
    per_case: dict[str, list[bool]] = {}
    for r in results:
        per_case.setdefault(r.case_id, []).append(r.passed)
    counts = [(len(v), sum(v)) for v in per_case.values()]
    passed = sum(c for _, c in counts)
    usable = [(n, c) for n, c in counts if n >= k]
    return CategoryStats(
        n_cases=len(per_case),
        n_results=len(results),
        passed=passed,
        pass_rate=passed / len(results) if results else 0.0,
        pass_at_k=mean_over_cases(usable, k, pass_at_k) if k > 1 else None,
        pass_hat_k=mean_over_cases(usable, k, pass_hat_k) if k > 1 else None,
        lost=lost,
    )


@dataclass
class EvalReport:
    """All results of one evaluation and the summaries `frames eval`, the gate and the front use.

    Attributes:
        results: one per case and sample, in case order then sample order.
        samples: k, the samples per case.
    """

    results: list[CaseResult]
    samples: int = 1

    def per_category(self) -> dict[str, CategoryStats]:
        """category → stats, categories sorted by name."""
        groups: dict[str, list[CaseResult]] = {}
        for r in self.results:
            groups.setdefault(r.category, []).append(r)
        return {cat: _stats(groups[cat], self.samples) for cat in sorted(groups)}

    def overall(self) -> CategoryStats:
        """Stats over every case (case-weighted)."""
        return _stats(self.results, self.samples)

    @property
    def pass_rate(self) -> float:
        """Passing results / all results (0..1)."""
        return self.overall().pass_rate

    def _mean(self, attr: str) -> float:
        # Over answered results: a lost call's tokens (often none) say nothing of what the skills cost.
        answered = [r for r in self.results if not r.lost]
        return sum(getattr(r.usage, attr) for r in answered) / len(answered) if answered else 0.0

    @property
    def mean_prompt_tokens(self) -> float:
        """Mean prompt tokens per answered case and sample (agent + judge)."""
        return self._mean("prompt_tokens")

    @property
    def mean_completion_tokens(self) -> float:
        """Mean completion tokens per case and sample (agent + judge)."""
        return self._mean("completion_tokens")

    @property
    def mean_tokens(self) -> float:
        """Mean prompt + completion tokens per case and sample: the FRAMES cost objective."""
        return self.mean_prompt_tokens + self.mean_completion_tokens

    @property
    def cost_usd(self) -> float | None:
        """Total USD where the price is known; None when no result has a price."""
        costs = [r.usage.cost_usd for r in self.results if r.usage.cost_usd is not None]
        return sum(costs) if costs else None

    def failures(self) -> list[CaseResult]:
        """The failing results, in order (lost ones are no failures: see `lost`)."""
        return [r for r in self.results if not r.passed and not r.lost]

    def lost(self) -> list[CaseResult]:
        """The results whose answer was lost on every try, in order."""
        return [r for r in self.results if r.lost]

    def require_answers(self) -> None:
        """Refuse a report in which no case got an answer at all.

        When every result is an agent failure (the provider refused every call: missing
        credentials, unknown model; or the agent program crashed every time), the pass rates say
        nothing about the skills, so the evaluation is a run-time failure, not a 0 % result.

        Raises:
            ModelError: every result has an `error` (exit code 1); the message quotes the first.
        """
        if self.results and all(r.error is not None for r in self.results):
            from frames_cli.errors import ModelError

            raise ModelError(f"no case got an answer; every call failed, first with: {self.results[0].error}")

    def to_json(self) -> dict[str, Any]:
        """Summary and results as JSON-ready data (the `--json` output and `report.json`)."""
        stats = lambda s: vars(s).copy()  # noqa: E731
        return {
            "samples": self.samples,
            "overall": stats(self.overall()),
            "per_category": {cat: stats(s) for cat, s in self.per_category().items()},
            "mean_prompt_tokens": self.mean_prompt_tokens,
            "mean_completion_tokens": self.mean_completion_tokens,
            "mean_tokens": self.mean_tokens,
            "cost_usd": self.cost_usd,
            "lost": len(self.lost()),
            "results": [r.to_dict() for r in self.results],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvalReport:
        """Rebuild a report from `to_json` output (summaries are recomputed from the results)."""
        return cls([CaseResult.from_dict(r) for r in data["results"]], int(data.get("samples", 1)))


def evaluate(
    cases: Sequence[Case],
    skills: SkillSet,
    executor: Executor,
    *,
    samples: int = 1,
    judge: ModelClient | None = None,
    progress: Progress | None = None,
    lost_retries: int = 0,
    first_sample: int = 0,
) -> EvalReport:
    """Run `executor` on `cases` `samples` times each with `skills`, blind, and check every answer.

    Samples are numbered from `first_sample` (0 for an evaluation; the sequential gate draws
    samples k, k + 1, … of a case later): a sample's number is part of its model-cache key, so
    every number is an independent draw.

    The executor only ever gets `Case.agent_view()`, `PROGRESS_CHUNK` cases per call. Local checks
    (exact, set, contains) run here; rubric checks go to `judge` in one batch per chunk.

    A result whose answer was lost (AgentResult.lost, or the judge's Verdict.lost) is run again,
    agent and check, up to `lost_retries` times (`eval.lost_retries`), with `retry` = 1, 2, … so
    the provider is asked afresh (answers that arrived come from the cache). One still lost after
    that stays in the report marked `lost`: no rate, gate or diagnosis counts it as a failure.

    Raises:
        ValueError: `samples` < 1, or rubric cases without a `judge`.
        BudgetExceeded: from the model layer, when the run's budget is spent.
        BatchPending: batch mode (`llm.batch`): calls went to provider batches; raised once every
            chunk's calls were sent (the last chunk's exception, which names every pending batch).
    """
    if samples < 1 or first_sample < 0:
        raise ValueError("samples must be at least 1 and first_sample at least 0")
    if judge is None and any(c.task.check.kind == "rubric" for c in cases):
        raise ValueError("rubric checks need a judge model client")
    views = [c.agent_view() for c in cases]
    by_sample: list[list[CaseResult]] = [[] for _ in range(samples)]
    done, total = 0, samples * len(cases)
    waiting: BatchPending | None = None
    with _old_objects_frozen():
        for sample in range(samples):
            for start in range(0, len(cases), PROGRESS_CHUNK):
                chunk = slice(start, start + PROGRESS_CHUNK)
                try:
                    checked = _run_chunk(cases[chunk], views[chunk], skills, executor, first_sample + sample, judge)
                except BatchPending as exc:
                    # Batch mode: this chunk's calls were sent as a batch; the other chunks' go out
                    # in this same run too, so a stage waits for one round of batches, not one per chunk.
                    waiting = exc
                    continue
                by_sample[sample] += checked
                done += len(checked)
                if progress:
                    progress(done, total)
        if waiting is not None:
            raise waiting
        for retry in range(1, lost_retries + 1):
            if not _run_lost_again(cases, views, skills, executor, by_sample, judge, retry, first_sample):
                break
    results = [by_sample[s][i] for i in range(len(cases)) for s in range(samples)]
    return EvalReport(results, samples)


def _run_chunk(
    cases: Sequence[Case], views: Sequence[Any], skills: SkillSet, executor: Executor, sample: int,
    judge: ModelClient | None,
) -> list[CaseResult]:
    """One executor call on `views` (a chunk of `cases`), and every answer checked."""
    agent_results = executor.run(views, skills, sample)
    if len(agent_results) != len(views):
        raise ValueError(f"executor returned {len(agent_results)} results for {len(views)} cases")
    return _check_all(cases, agent_results, sample, judge)


def _run_lost_again(
    cases: Sequence[Case], views: Sequence[Any], skills: SkillSet, executor: Executor,
    by_sample: list[list[CaseResult]], judge: ModelClient | None, retry: int, first_sample: int = 0,
) -> bool:
    """Run every lost result of `by_sample` again (try number `retry`), in place; False when none was lost.

    A retried result keeps the tokens its lost tries cost, so the cost objective sees them.
    """
    any_lost = False
    for sample, results in enumerate(by_sample):
        at = [i for i, r in enumerate(results) if r.lost]
        for start in range(0, len(at), PROGRESS_CHUNK):
            chunk = at[start:start + PROGRESS_CHUNK]
            any_lost = True
            agent_results = executor.run([views[i] for i in chunk], skills, first_sample + sample, retry=retry)
            again = _check_all([cases[i] for i in chunk], agent_results, first_sample + sample, judge, retry)
            for i, new in zip(chunk, again):
                new.usage.add(results[i].usage)
                results[i] = new
    return any_lost


@contextlib.contextmanager
def _old_objects_frozen() -> Iterator[None]:
    """Keep the garbage collector's full collections off the objects that exist on entry.

    The cases (tens of objects each, 10,000 of them in a large evaluation), the skills and the
    imported libraries outlive the evaluation, yet every full collection during it walked them
    all again: 4 s of 28 s of CPU for 4,000 tau2 cases (bench/eval_scale.py). `gc.freeze` moves
    them to the permanent generation until the evaluation ends; cycles among them that become
    garbage meanwhile are collected after `gc.unfreeze`. When part of the heap is already frozen
    (litellm's modules, frozen on import, or an enclosing evaluation) the objects made since are
    frozen too, and everything stays frozen afterwards: a freeze cannot be undone in part, and
    undoing it whole would hand the caller's frozen objects back to the collector. Objects frozen
    that way are still freed by reference counting; only garbage cycles among them stay.
    """
    already = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not already:
            gc.unfreeze()


def _check_all(
    cases: Sequence[Case], agent_results: Sequence[AgentResult], sample: int, judge: ModelClient | None, retry: int = 0
) -> list[CaseResult]:
    verdicts: list[Verdict | None] = [None] * len(cases)
    rubric_at: list[int] = []
    for i, (case, result) in enumerate(zip(cases, agent_results)):
        if result.error is not None:
            verdicts[i] = Verdict(
                False, f"{'answer lost' if result.lost else 'agent failed'}: {result.error}", error=result.error,
                lost=result.lost,
            )
        elif case.task.check.kind == "rubric":
            rubric_at.append(i)
        else:
            verdicts[i] = LOCAL_CHECKS[case.task.check.kind].check(case, result.output)
    if rubric_at:
        assert judge is not None
        rubric = RubricCheck(judge)
        replies = judge.chat_many([rubric.request(cases[i], agent_results[i].output, sample, retry) for i in rubric_at])
        for i, reply in zip(rubric_at, replies):
            verdicts[i] = rubric.verdict(reply)
    out = []
    for case, result, verdict in zip(cases, agent_results, verdicts):
        assert verdict is not None
        usage = Usage(
            result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.cost_usd,
            result.usage.cached_prompt_tokens,
        )
        usage.add(verdict.usage)
        out.append(
            CaseResult(
                case_id=case.id, category=case.category, sample=sample, passed=verdict.passed, reason=verdict.reason,
                output=result.output, skills_used=list(result.skills_used), usage=usage,
                error=verdict.error, trajectory=result.trajectory, lost=verdict.lost,
            )
        )
    return out
