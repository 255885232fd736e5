"""`evaluate_parallel`: `evaluate` split over worker processes (`frames eval --jobs N`)."""

from __future__ import annotations

import gc
import multiprocessing
import pickle
import signal
import threading
import zlib
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.evaluation.allocator import fill_allocator_holes
from frames_cli.evaluation.runner import PROGRESS_CHUNK, CaseResult, EvalReport, Progress, evaluate
from frames_cli.workspace.config import with_overrides

if TYPE_CHECKING:
    from multiprocessing.queues import SimpleQueue
    from multiprocessing.synchronize import Event as EventType

    from frames_cli.formats.case import Case
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.llm.store.ledger import Ledger
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
    """One worker's answer: its results as a pickled list per chunk
    (None when it failed or was stopped), its spend, and its failure."""

    results: list[bytes] | None
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
    and executor, evaluates its slice `PROGRESS_CHUNK` cases at a time, and returns its results
    and spend. Results are joined in slice order, so they stay in case order then sample order.
    Each worker's budget is `budget.max_tokens // jobs` tokens and `budget.max_usd / jobs` USD
    (docs/decisions/0018-eval-jobs-slices.md), so the workers together never spend more than the run's budget (plus
    calls in flight). When a worker fails (its share of the budget spent, a bad case), the others
    stop: the failure is raised and their results would be thrown away, so each closes its model
    client (calls in flight end at once) and ends after its current executor batch.

    Processes are forked when this process has a single thread (no model call made yet, no
    progress thread), otherwise spawned: forking a process with threads can copy a
    held lock into the child. Before forking, litellm is imported here when a model will be
    called, so workers share one import and one copy of its tokenizer (which `litellm_module`
    loads: litellm asks for it on every completion, even a custom provider's; 0.13 s and about
    38 MB each worker would otherwise load on its first call).

    Memory: after a fork, every page that this process or a worker writes to is copied, and
    CPython writes to an object whenever it takes a reference to it. Measured with
    bench/eval_scale.py (10,000 tau2 cases, jobs=2, no cache), the peak PSS summed over the
    processes was 2,247 MB when workers were sent pickled slices, and is 894 MB with:
    - each slice pickled here, `PROGRESS_CHUNK` cases per bytes object, before any worker
      exists; a forked worker finds its chunks in the memory it inherited (a spawned one is
      sent them) and unpickles one chunk at a time (forked workers that read this process's
      case objects instead: 1,327 against 993 MB);
    - the chunks compressed (77 MB of pickles in 18 MB: 993 → 933 MB);
    - the free blocks scattered over this process's small-object pools filled before the fork
      (`fill_allocator_holes`), so workers allocate in fresh pages (without: 1,323 against 993 MB);
    - each chunk's results kept pickled in the worker, a sixth of their memory (933 → 894 MB),
      and the outcomes decoded here once the workers have ended (decoded while they live: 1,006
      against 997 MB).
    `gc.freeze()` before the fork, which the Python documentation advises against copy-on-write,
    made no measurable difference (991 against 993 MB): full collections are rare in a worker,
    and `evaluate` freezes the heap it finds.

    Args:
        ledger: the run's ledger; every worker's totals are added to it (tokens, USD, calls), also
            when a worker failed or the evaluation was interrupted.
        progress: called with (results done over all workers, results in all).

    Raises:
        ValueError: `jobs` < 1 or `samples` < 1 (before any worker starts).
        KeyboardInterrupt: SIGINT (Ctrl-C) reached this process; the workers are stopped as after
            a failure and their spend added to `ledger` first.
        BudgetExceeded, InputError, ...: the first failure of a worker, raised once every worker
            has ended (the errors `evaluate` raises in-process; an InputError
            arrives with its `path:line: message` text but without its separate `location`).
    """
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    if samples < 1:
        raise ValueError("samples must be at least 1")
    jobs = min(jobs, len(cases)) or 1
    bounds = [len(cases) * i // jobs for i in range(jobs + 1)]
    config = _worker_config(setup.config, jobs)
    worker_setup = WorkerSetup(setup.workspace, config, setup.run_dir, setup.use_cache)
    if threading.active_count() == 1 and (
        setup.config.executor.kind == "builtin" or any(c.task.check.kind == "rubric" for c in cases)
    ):
        from frames_cli.llm.transport.providers import litellm_module

        # Import litellm (seconds of CPU) once here rather than once in every forked worker.
        litellm_module()
    # Checked after the import: a thread started by it would make forking unsafe too.
    fork = threading.active_count() == 1
    context = multiprocessing.get_context("fork" if fork else "spawn")
    messages: SimpleQueue = context.SimpleQueue()
    stop = context.Event()
    failed: list[int] = []  # workers in the order they reported a failure
    done = [0] * jobs
    chunks = [pickled_chunks(cases[bounds[k]:bounds[k + 1]]) for k in range(jobs)]
    # Held until the workers have ended: freeing it earlier would write to pages shared with them.
    ballast = fill_allocator_holes() if fork else []
    # A forked worker takes its chunks from the inherited list by its index; a spawned one is sent them.
    with ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_init_worker, initargs=(messages, stop, chunks if fork else None)
    ) as pool:
        futures = [
            pool.submit(_run_slice, k, None if fork else chunks[k], skills, worker_setup, samples) for k in range(jobs)
        ]
        pending: set[Future[bytes]] = set(futures)
        interrupted = False
        while pending:
            try:
                _, pending = wait(pending, timeout=PROGRESS_POLL_S, return_when=FIRST_COMPLETED)
                _read_messages(messages, done, failed, stop)
                if progress:
                    progress(sum(done), len(cases) * samples)
            except KeyboardInterrupt:
                # The workers ignore SIGINT: they stop as after a failure and hand back their
                # spend, which the ledger must count. A second Ctrl-C leaves without it.
                if interrupted:
                    raise
                interrupted = True
                stop.set()
    # Decoded once the workers have ended: objects made here while they live would land in pages
    # this process shares with them, and each such page would be copied.
    del ballast
    return EvalReport(_results(futures, ledger, interrupted, failed), samples)


def _read_messages(messages: SimpleQueue, done: list[int], failed: list[int], stop: EventType) -> None:
    """Take the workers' messages: results done so far per worker, or None from a worker that
    failed (the others are then told to `stop`)."""
    while not messages.empty():
        worker, count = messages.get()
        if count is None:
            failed.append(worker)
            stop.set()
        else:
            done[worker] = count


def _results(
    futures: list[Future[bytes]], ledger: Ledger | None, interrupted: bool, failed: list[int]
) -> list[CaseResult]:
    """The workers' results in slice order, their spend added to `ledger` first; KeyboardInterrupt
    when interrupted, else the first failure (of the first worker to report one) raised."""
    outcomes: list[_SliceOutcome] = [pickle.loads(f.result()) for f in futures]
    if ledger is not None:
        for outcome in outcomes:
            ledger.add_totals(outcome.roles)
    if interrupted:
        raise KeyboardInterrupt
    for k in [*failed, *range(len(outcomes))]:
        if outcomes[k].error is not None:
            raise outcomes[k].error
    return [r for outcome in outcomes for part in outcome.results or [] for r in pickle.loads(part)]


def _worker_config(config: FramesConfig, jobs: int) -> FramesConfig:
    """A worker's config: 1/jobs of the budget, and its litellm calls in its own threads.

    `llm.processes` is set to 0 because the workers already spread the calls over processes, and
    a forked worker must not reach for a fork server that its parent started (multiprocessing
    keeps that server's process id, which is not the worker's child).
    """
    budget = config.budget
    config = with_overrides(config, "llm", processes=0)
    return with_overrides(
        config, "budget",
        max_tokens=None if budget.max_tokens is None else max(1, budget.max_tokens // jobs),
        max_usd=None if budget.max_usd is None else budget.max_usd / jobs,
    )


def pickled_chunks(cases: Sequence[Case]) -> list[bytes]:
    """`cases` as compressed pickles of `PROGRESS_CHUNK` cases each, in order (the last may hold fewer).

    For 10,000 tau2 cases (about 560 MB of objects): 77 MB of pickles, 18 MB compressed at
    zlib's fastest level; 2.4 s of CPU (0.5 s of it compressing), and 1.1 s over the workers to
    read them back (`unpickled_chunk`).
    """
    return [
        zlib.compress(pickle.dumps(list(cases[i : i + PROGRESS_CHUNK]), pickle.HIGHEST_PROTOCOL), 1)
        for i in range(0, len(cases), PROGRESS_CHUNK)
    ]


def unpickled_chunk(chunk: bytes) -> list[Case]:
    """The cases of one `pickled_chunks` item.

    The cycle collector is paused meanwhile: the thousands of containers made at once otherwise
    trigger collections that make unpickling about four times slower (cases are trees, freed by
    reference counting).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(zlib.decompress(chunk))
    finally:
        if enabled:
            gc.enable()


# The worker's end of the progress queue (it sends (worker, results done), or (worker, None)
# when it failed), the event the parent sets to stop every worker and, in a forked worker, every
# worker's chunks as the parent made them (inherited, not copied): set once per worker process
# by `_init_worker`.
_progress_queue: SimpleQueue | None = None
_stop_event: EventType | None = None
_inherited_chunks: list[list[bytes]] | None = None


class _Stopped(Exception):
    """Raised in a worker after a batch, once the parent has asked the workers to stop."""


def _init_worker(messages: SimpleQueue, stop: EventType, inherited: list[list[bytes]] | None) -> None:
    global _progress_queue, _stop_event, _inherited_chunks
    # Ctrl-C reaches the terminal's whole process group; the parent stops the workers through
    # `stop`, so a worker interrupted mid-call does not lose the spend it must report.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _progress_queue, _stop_event, _inherited_chunks = messages, stop, inherited


def _close_when_stopped(client: ModelClient, ended: threading.Event) -> None:
    """Close `client` once the parent sets the stop event, so the calls of the current batch end at
    once (as failures nobody reads); return when the slice has `ended` first."""
    while not ended.is_set():
        if _stop_event is not None and _stop_event.wait(PROGRESS_POLL_S):
            client.close()
            return


def _run_slice(worker: int, sent: list[bytes] | None, skills: SkillSet, setup: WorkerSetup, samples: int) -> bytes:
    """Evaluate slice `worker` in a worker process with a client
    of its own, one chunk at a time; its pickled `_SliceOutcome`.

    The slice's chunks (`pickled_chunks`) are `sent` (a spawned worker) or
    `_inherited_chunks[worker]` (a forked one). The simulator's world holds the current chunk's
    cases only (the simulated models look up the case of the prompt they are answering).
    Failures come back inside the outcome, with the spend so far, so the parent's ledger counts
    the calls a failed worker made.
    """
    from frames_cli.executor.factory import make_executor
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.sim.world import SimWorld, policy_texts

    if sent is None:
        assert _inherited_chunks is not None
        sent = _inherited_chunks[worker]
    world = SimWorld.from_cases((), policy_texts(setup.workspace))
    finished = 0

    def report(done: int, _total: int) -> None:
        if _stop_event is not None and _stop_event.is_set():
            raise _Stopped
        if _progress_queue is not None:
            _progress_queue.put((worker, finished + done))

    client = ModelClient(
        setup.workspace, setup.config, run_dir=setup.run_dir, use_cache=setup.use_cache, sim_world=world,
        save_ledger=False,
    )
    results: list[bytes] = []
    error = None
    stopped = False
    ended = threading.Event()
    threading.Thread(target=_close_when_stopped, args=(client, ended), daemon=True).start()
    with client:
        try:
            executor = make_executor(setup.workspace, setup.config, client)
            for chunk in sent:
                cases = unpickled_chunk(chunk)
                world.cases = SimWorld.from_cases(cases).cases
                judge = client if any(c.task.check.kind == "rubric" for c in cases) else None
                results.append(
                    pickle.dumps(
                        evaluate(
                            cases, skills, executor, samples=samples, judge=judge, progress=report,
                            lost_retries=setup.config.eval.lost_retries,
                        ).results,
                        pickle.HIGHEST_PROTOCOL,
                    )
                )
                finished += len(cases) * samples
        except _Stopped:
            stopped = True
        except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
            error = exc
            if _progress_queue is not None:
                _progress_queue.put((worker, None))
        finally:
            ended.set()
    return pickle.dumps(
        _SliceOutcome(None if error or stopped else results, client.ledger.to_dict()["roles"], error),
        pickle.HIGHEST_PROTOCOL,
    )
