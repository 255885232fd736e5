"""ModelClient: every model call of frames: concurrency, timeouts, retries, cache, ledger, audit, repair."""

from __future__ import annotations

import asyncio
import functools
import threading
import weakref
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from frames_cli.errors import BudgetExceeded
from frames_cli.llm.client.answer import Answerer, model_for
from frames_cli.llm.messages.types import ChatReply, ChatRequest, Usage
from frames_cli.llm.store.audit import AuditLog, Redactor
from frames_cli.llm.store.cache import ResponseCache
from frames_cli.llm.store.ledger import Ledger
from frames_cli.llm.transport import providers
from frames_cli.llm.transport.batch import BatchJournal, BatchPending, BatchWait

if TYPE_CHECKING:
    from frames_cli.llm.transport.callpool import CallPool
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

__all__ = ["ChatReply", "ChatRequest", "ModelClient", "Usage"]

T = TypeVar("T")
R = TypeVar("R")

class ModelClient:
    """One door to the models of every role (DESIGN §7); see docs/ARCHITECTURE.md `llm/`.

    Requests run `llm.concurrency` at a time, each whole request (retries, repair turn) in one
    worker thread of a pool that size: `chat_many` hands them to the pool directly, `gather`
    through an asyncio semaphore (conversations, whose turns wait for each other). Each thread
    calls litellm's synchronous `completion` (measured here: ~1.3 ms of CPU per call
    on that path against ~3 ms for `acompletion`, whose logging and cost tasks share the event
    loop), or, with `llm.processes` > 0, has a CallPool worker process make that call
    (`llm/transport/callpool.py`), so litellm's CPU is not bound by this process's GIL. Each call gets
    `timeout=llm.timeout_s`; rate limits, timeouts and connection errors are retried up to `llm.max_retries`
    times with exponential backoff and equal jitter (Brooker, "Exponential Backoff And Jitter", AWS
    Architecture Blog, 2015). A request with a schema gets its JSON extracted and validated, and up to
    `llm.repair_turns` repair turns that show the model the validator's errors. Successful answers are cached
    on disk; errors never are. Every call is written to `<run_dir>/exchanges.jsonl` (secrets redacted) and
    added to the ledger; the budget is checked before every call. With `save_ledger=False` the ledger stays in
    memory and `ledger.json` is not written: a `frames eval --jobs` worker, whose totals the parent merges.

    Failures are replies with `error`, never exceptions; the exceptions are BudgetExceeded (raised
    by `gather`/`chat_many` once in-flight calls are finished and recorded), ModelSetupError (a
    provider refused the credentials or does not know the model: not retried, raised the same way)
    and ConfigError (no model for a role, or more than 240 calls in flight per worker process). After `close()`,
    every request and call fails ("closed").

    This class schedules requests; what answering one means (cache, retries, repair, ledger and
    audit records) is `llm/client/answer.Answerer`.
    """

    def __init__(
        self,
        workspace: Workspace,
        config: FramesConfig,
        *,
        run_dir: Path | None = None,
        use_cache: bool = True,
        sim_world: Any = None,
        save_ledger: bool = True,
    ):
        self.workspace = workspace
        self.config = config
        # Cache, audit log and ledger go under .frames/: create it git-ignored first.
        workspace.make_state_dir()
        self.run_dir = Path(run_dir) if run_dir else None
        redactor = self._redact = Redactor()
        self.ledger = Ledger(
            config.budget.max_tokens, config.budget.max_usd,
            self.run_dir / "ledger.json" if self.run_dir and save_ledger else None,
        )
        self.audit = AuditLog(self.run_dir / "exchanges.jsonl", redactor) if self.run_dir else None
        self.cache = ResponseCache(workspace.cache_dir, redactor) if use_cache and config.llm.cache else None
        self._context = providers.ProviderContext(
            workspace.root, config.simulator, config.spool, functools.partial(_load_world, workspace, config, sim_world)
        )
        self._ctx = providers.register(self._context)
        self._pool: ThreadPoolExecutor | None = None
        self._processes: CallPool | None = None
        self._pool_lock = threading.Lock()
        self._closed = False
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self.batches = BatchJournal.of(workspace, config) if config.llm.batch else None
        self._answerer = Answerer(
            workspace, config, ledger=self.ledger, audit=self.audit, cache=self.cache, redact=redactor,
            context=self._context, ctx=self._ctx, call_pool=self._call_pool, closed=lambda: self._closed,
            batch=self.batches,
        )

    # --- public API -----------------------------------------------------------------------------

    def model_for(self, role: str) -> str:
        """The model string of `role` (`models.<role>` in frames.yaml).

        Raises:
            ConfigError: the role has no model configured (exit code 2).
        """
        return model_for(self.config, role)

    async def achat(self, request: ChatRequest) -> ChatReply:
        """Answer one request (cache, semaphore, retries, repair turn, ledger, audit).

        Run it inside `gather` (or call `close()` after your own event loop): cache entries, audit
        lines and the ledger file are written at the end of each `gather`.

        Raises:
            BudgetExceeded: the budget was spent before a model call this request needed.
            ConfigError: no model for `request.role`.
            InputError: a case file the simulator reads is malformed (frames-sim models only).
        """
        model, key, cached = self._answerer.lookup(request)
        if cached is not None:
            return cached
        loop = asyncio.get_running_loop()
        async with self._semaphore():
            # The whole request (retries, repair turn, cache write) runs in one worker thread: one
            # hop between the loop and a thread per request instead of one per call.
            return await loop.run_in_executor(self._executor(), self._answerer.serve, request, model, key)

    def chat(self, request: ChatRequest) -> ChatReply:
        """One request from synchronous code (`chat_many` of one; same errors)."""
        return self.chat_many([request])[0]

    def chat_many(self, requests: Sequence[ChatRequest]) -> list[ChatReply]:
        """Answer `requests` concurrently, `llm.concurrency` at a time; replies in the same order.

        Independent requests need no event loop: the worker threads take them in order and each
        answers one whole request (cache, retries, repair turn, ledger, audit) before taking the
        next. Measured with bench/llm_overhead.py, this saves the two loop–thread hand-offs per
        request that `gather(achat, ...)` makes (about 0.1 ms of CPU each under the GIL).

        Raises:
            BudgetExceeded, ConfigError, InputError: as `gather` raises them (every request ends first).
            BatchPending: batch mode (`llm.batch`): some request waits for a provider batch (see `gather`).
        """

        def answer(request: ChatRequest) -> ChatReply:
            model, key, cached = self._answerer.lookup(request)
            return cached if cached is not None else self._answerer.serve(request, model, key)

        pool = self._executor()
        try:
            futures = [self._submit(pool, answer, request) for request in requests]
            wait(futures)
        finally:
            self._flush()
        return self._finish([f.exception() or f.result() for f in futures])

    def _submit(
        self, pool: ThreadPoolExecutor, answer: Callable[[ChatRequest], ChatReply], request: ChatRequest
    ) -> Future[ChatReply]:
        """`pool.submit(answer, request)`; once `close()` has shut the pool down, a done future
        holding the "closed" failure (close may run in another thread while requests go in)."""
        try:
            return pool.submit(answer, request)
        except RuntimeError:
            if not self._closed:
                raise
            done: Future[ChatReply] = Future()
            done.set_result(self._answerer.serve(request, "", ""))
            return done

    def gather(self, fn: Callable[[T], Awaitable[R]], items: Sequence[T]) -> list[R]:
        """Run `fn(item)` for every item in one event loop; results in order.

        Every task runs to its end before anything is raised, so finished calls are cached and
        recorded; the ledger is saved after the batch.

        Raises:
            BudgetExceeded: some task hit the budget (the other tasks finished first).
            Exception: the first other exception a task raised.
            BatchPending: batch mode (`llm.batch`): some task waits for a provider batch; the calls
                queued were sent (exit code 75: run the command again later).
        """

        async def run() -> list[Any]:
            return await asyncio.gather(*(fn(item) for item in items), return_exceptions=True)

        try:
            results = asyncio.run(run())
        finally:
            self._flush()
        return self._finish(results)

    def _finish(self, results: list[Any]) -> list[Any]:
        """`results` of a batch of requests or tasks, or the exception to raise (`_results_or_raise`).

        With batch mode, requests that wait for a provider batch (BatchWait) end the stage: when no
        other exception is to be raised, the calls queued meanwhile are sent as batches and
        BatchPending says what the command waits for.
        """
        waiting = [r for r in results if isinstance(r, BatchWait)]
        if not waiting:
            return _results_or_raise(results)
        _results_or_raise([r for r in results if not isinstance(r, BatchWait)])
        assert self.batches is not None
        self.batches.submit()
        raise BatchPending(self.batches.waiting_message())

    def close(self) -> None:
        """Release worker threads and processes, the audit file and the provider context (idempotent).

        Requests still queued then end at once as failed replies ("closed"), so a `chat_many`
        waiting in another thread returns (a cancelled future would never wake its `wait`).
        """
        with self._pool_lock:
            self._closed = True
        providers.unregister(self._ctx)
        self._context.closed.set()
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        if self._processes is not None:
            self._processes.close()
        self._flush()

    def _flush(self) -> None:
        """Put queued cache entries and audit lines on disk and save the ledger.

        A client that served no request writes nothing (no empty run records).
        """
        for out in (self.cache, self.audit):
            if out is not None:
                out.flush()
        if self.ledger.roles:
            self.ledger.save()

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- threads, event loops, worker processes ------------------------------------------------

    def _semaphore(self) -> asyncio.Semaphore:
        # A semaphore belongs to one event loop, and every gather runs its own loop.
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = self._semaphores[loop] = asyncio.Semaphore(self.config.llm.concurrency)
        return sem

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.config.llm.concurrency, thread_name_prefix="frames-llm")
        return self._pool

    def _call_pool(self) -> CallPool | None:
        """The worker processes of `llm.processes`, started on first use; None when it is 0.

        A closed client starts none (its closed pool, if it had one, fails every call).
        """
        processes = self.config.llm.processes
        if not processes:
            return None
        with self._pool_lock:
            if self._processes is None and not self._closed:
                from frames_cli.llm.transport.callpool import CallPool

                sim = any(m and m.startswith(providers.SIM_PREFIX + "/") for m in vars(self.config.models).values())
                context = self._context
                self._processes = CallPool(
                    processes, self.config.llm.concurrency, self._ctx, context.root, context.simulator, context.spool,
                    context.world() if sim else None,
                )
            return self._processes


def _results_or_raise(results: list[Any]) -> list[Any]:
    """`results` when none is an exception; else raise BudgetExceeded first, then the first other one."""
    for exc in (r for r in results if isinstance(r, BaseException)):
        if isinstance(exc, BudgetExceeded):
            raise exc
    for exc in (r for r in results if isinstance(r, BaseException)):
        raise exc
    return results


def _load_world(workspace: Workspace, config: FramesConfig, given: Any) -> Any:
    """The simulator's world: `given`, else the simulator provider's own loader (found through the
    registry, so this package does not import the simulator)."""
    if given is not None:
        return given
    from frames_cli.registry import PROVIDERS

    return PROVIDERS.load(providers.SIM_PREFIX).load_world(workspace, config)
