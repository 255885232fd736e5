"""`evaluate_parallel`: `evaluate` split over worker processes (`frames eval --jobs N`)."""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from frames_cli.evaluation.runner import CaseResult, EvalReport, Progress, evaluate
from frames_cli.workspace.config import with_overrides

if TYPE_CHECKING:
    from multiprocessing.queues import SimpleQueue

    from frames_cli.formats.case import Case
    from frames_cli.formats.skill import SkillSet
    from frames_cli.llm.ledger import Ledger
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

#: Seconds between two looks at the workers' progress messages.
PROGRESS_POLL_S = 0.2


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker process needs to build its own model client and executor (picklable).

    Attributes:
        workspace: the workspace (cache folder, executor's working folder).
        config: the run's configuration; each worker gets it with 1/N of the budget.
        run_dir: the run's folder: every worker appends to its `exchanges.jsonl`; the ledger is
            merged by the parent (None: no audit log).
        use_cache: reuse and store cached answers.
    """

    workspace: Workspace
    config: FramesConfig
    run_dir: Path | None = None
    use_cache: bool = True


@dataclass
class _SliceOutcome:
    """One worker's answer: its results (None when it failed), its spend, and its failure."""

    results: list[CaseResult] | None
    roles: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: BaseException | None = None


def evaluate_parallel(
    cases: Sequence[Case],
    skills: SkillSet,
    setup: WorkerSetup,
    *,
    jobs: int,
    samples: int = 1,
    ledger: Ledger | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """`evaluate` over `jobs` worker processes; the report equals the one `evaluate` gives in-process.

    The cases are cut into `jobs` contiguous slices (sizes differ by at most one); each worker
    builds its own ModelClient (cache, audit log lines in `setup.run_dir`, an in-memory ledger)
    and executor, evaluates its slice, and returns its results and spend. Results are joined in
    slice order, so they stay in case order then sample order. Each worker's budget is
    `budget.max_tokens // jobs` tokens and `budget.max_usd / jobs` USD (docs/DECISIONS.md), so the
    workers together never spend more than the run's budget (plus calls in flight). Processes are
    forked when this process has a single thread (no model call made yet, no progress thread),
    otherwise spawned: forking a process with threads can copy a held lock into the child. Before
    forking, litellm is imported here when a model will be called, so workers share one import.

    Args:
        ledger: the run's ledger; every worker's totals are added to it (tokens, USD, calls), also
            when a worker failed.
        progress: called with (results done over all workers, results in all).

    Raises:
        ValueError: `jobs` < 1, or (from a worker) `samples` < 1.
        BudgetExceeded, InputError, ...: the first failure of a worker, in slice order, raised
            once every worker has ended (the errors `evaluate` raises in-process; an InputError
            arrives with its `path:line: message` text but without its separate `location`).
    """
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    jobs = min(jobs, len(cases)) or 1
    bounds = [len(cases) * i // jobs for i in range(jobs + 1)]
    config = _budget_share(setup.config, jobs)
    fork = threading.active_count() == 1
    if fork and (setup.config.executor.kind == "builtin" or any(c.task.check.kind == "rubric" for c in cases)):
        from frames_cli.llm.providers import litellm_module

        # Import litellm (seconds of CPU) once here rather than once in every forked worker.
        litellm_module()
    context = multiprocessing.get_context("fork" if fork and threading.active_count() == 1 else "spawn")
    messages: SimpleQueue = context.SimpleQueue()
    done = [0] * jobs
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker, initargs=(messages,)) as pool:
        futures = [
            pool.submit(_run_slice, k, list(cases[bounds[k]:bounds[k + 1]]), skills, WorkerSetup(setup.workspace, config, setup.run_dir, setup.use_cache), samples)
            for k in range(jobs)
        ]
        pending: set[Future[_SliceOutcome]] = set(futures)
        while pending:
            _, pending = wait(pending, timeout=PROGRESS_POLL_S, return_when=FIRST_COMPLETED)
            while not messages.empty():
                worker, count = messages.get()
                done[worker] = count
            if progress:
                progress(sum(done), len(cases) * samples)
        outcomes = [f.result() for f in futures]
    if ledger is not None:
        for outcome in outcomes:
            ledger.add_totals(outcome.roles)
    for outcome in outcomes:
        if outcome.error is not None:
            raise outcome.error
    return EvalReport([r for outcome in outcomes for r in outcome.results or []], samples)


def _budget_share(config: FramesConfig, jobs: int) -> FramesConfig:
    budget = config.budget
    return with_overrides(
        config, "budget",
        max_tokens=None if budget.max_tokens is None else max(1, budget.max_tokens // jobs),
        max_usd=None if budget.max_usd is None else budget.max_usd / jobs,
    )


# The worker's end of the progress queue, set once per worker process by `_init_worker`.
_progress_queue: SimpleQueue | None = None


def _init_worker(messages: SimpleQueue) -> None:
    global _progress_queue
    _progress_queue = messages


def _run_slice(worker: int, cases: list[Case], skills: SkillSet, setup: WorkerSetup, samples: int) -> _SliceOutcome:
    """Evaluate one slice in a worker process with a client of its own.

    Failures come back inside the outcome, with the spend so far, so the parent's ledger counts
    the calls a failed worker made.
    """
    from frames_cli.executor.factory import make_executor
    from frames_cli.llm.client import ModelClient
    from frames_cli.sim.world import SimWorld

    def report(done: int, _total: int) -> None:
        if _progress_queue is not None:
            _progress_queue.put((worker, done))

    client = ModelClient(setup.workspace, setup.config, run_dir=setup.run_dir, use_cache=setup.use_cache, sim_world=SimWorld.from_cases(cases), save_ledger=False)
    with client:
        try:
            executor = make_executor(setup.workspace, setup.config, client)
            judge = client if any(c.task.check.kind == "rubric" for c in cases) else None
            results: list[CaseResult] | None = evaluate(cases, skills, executor, samples=samples, judge=judge, progress=report).results
            error = None
        except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
            results, error = None, exc
    return _SliceOutcome(results, client.ledger.to_dict()["roles"], error)
