"""ModelClient: every model call of frames: concurrency, timeouts, retries, cache, ledger, audit, repair."""

from __future__ import annotations

import asyncio
import functools
import random
import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence, TypeVar

from frames_cli.errors import BudgetExceeded, ConfigError, Location, ModelSetupError
from frames_cli.llm import providers
from frames_cli.llm.audit import AuditLog, Redactor
from frames_cli.llm.cache import ResponseCache, request_key
from frames_cli.llm.calls import CallOutcome, invoke
from frames_cli.llm.ledger import Ledger
from frames_cli.llm.types import ChatReply, ChatRequest, Usage

if TYPE_CHECKING:
    from frames_cli.llm.callpool import CallPool
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
    (`llm/callpool.py`), so litellm's CPU is not bound by this process's GIL. Each call gets `timeout=llm.timeout_s`; rate limits, timeouts and connection errors are retried up to
    `llm.max_retries` times with exponential backoff and equal jitter (Brooker, "Exponential
    Backoff And Jitter", AWS Architecture Blog, 2015). A request with a schema gets its JSON
    extracted and validated, and up to `llm.repair_turns` repair turns that show the model the
    validator's errors. Successful answers are cached on disk; errors never are. Every call is
    written to `<run_dir>/exchanges.jsonl` (secrets redacted) and added to the ledger; the budget
    is checked before every call. With `save_ledger=False` the ledger stays in memory and
    `ledger.json` is not written: a `frames eval --jobs` worker, whose totals the parent merges.

    Failures are replies with `error`, never exceptions; the exceptions are BudgetExceeded (raised
    by `gather`/`chat_many` once in-flight calls are finished and recorded), ModelSetupError (a
    provider refused the credentials or does not know the model: not retried, raised the same way)
    and ConfigError (no model for a role, or more than 240 calls in flight per worker process). After `close()`,
    every request and call fails ("closed").
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
            config.budget.max_tokens, config.budget.max_usd, self.run_dir / "ledger.json" if self.run_dir and save_ledger else None
        )
        self.audit = AuditLog(self.run_dir / "exchanges.jsonl", redactor) if self.run_dir else None
        self.cache = ResponseCache(workspace.cache_dir, redactor) if use_cache and config.llm.cache else None
        self._context = providers.ProviderContext(workspace.root, config.simulator, config.spool, functools.partial(_load_world, workspace, config, sim_world))
        self._ctx = providers.register(self._context)
        self._pool: ThreadPoolExecutor | None = None
        self._processes: CallPool | None = None
        self._pool_lock = threading.Lock()
        self._closed = False
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()
        self._schema_support: dict[str, bool] = {}
        # model → the setup error (credentials, unknown model) its first failed call got
        self._refused: dict[str, str] = {}

    # --- public API -----------------------------------------------------------------------------

    def model_for(self, role: str) -> str:
        """The model string of `role` (`models.<role>` in frames.yaml).

        Raises:
            ConfigError: the role has no model configured (exit code 2).
        """
        model = getattr(self.config.models, role, None)
        if not model:
            raise ConfigError(f"no model configured for this role: set `models.{role}` in frames.yaml", None)
        return model

    async def achat(self, request: ChatRequest) -> ChatReply:
        """Answer one request (cache, semaphore, retries, repair turn, ledger, audit).

        Run it inside `gather` (or call `close()` after your own event loop): cache entries, audit
        lines and the ledger file are written at the end of each `gather`.

        Raises:
            BudgetExceeded: the budget was spent before a model call this request needed.
            ConfigError: no model for `request.role`.
            InputError: a case file the simulator reads is malformed (frames-sim models only).
        """
        model, key, cached = self._lookup(request)
        if cached is not None:
            return cached
        loop = asyncio.get_running_loop()
        async with self._semaphore():
            # The whole request (retries, repair turn, cache write) runs in one worker thread: one
            # hop between the loop and a thread per request instead of one per call.
            return await loop.run_in_executor(self._executor(), self._serve, request, model, key)

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
        """

        def answer(request: ChatRequest) -> ChatReply:
            model, key, cached = self._lookup(request)
            return cached if cached is not None else self._serve(request, model, key)

        pool = self._executor()
        try:
            futures = [self._submit(pool, answer, request) for request in requests]
            wait(futures)
        finally:
            self._flush()
        return _results_or_raise([f.exception() or f.result() for f in futures])

    def _submit(self, pool: ThreadPoolExecutor, answer: Callable[[ChatRequest], ChatReply], request: ChatRequest) -> Future[ChatReply]:
        """`pool.submit(answer, request)`; once `close()` has shut the pool down, a done future
        holding the "closed" failure (close may run in another thread while requests go in)."""
        try:
            return pool.submit(answer, request)
        except RuntimeError:
            if not self._closed:
                raise
            done: Future[ChatReply] = Future()
            done.set_result(self._serve(request, "", ""))
            return done

    def gather(self, fn: Callable[[T], Awaitable[R]], items: Sequence[T]) -> list[R]:
        """Run `fn(item)` for every item in one event loop; results in order.

        Every task runs to its end before anything is raised, so finished calls are cached and
        recorded; the ledger is saved after the batch.

        Raises:
            BudgetExceeded: some task hit the budget (the other tasks finished first).
            Exception: the first other exception a task raised.
        """

        async def run() -> list[Any]:
            return await asyncio.gather(*(fn(item) for item in items), return_exceptions=True)

        try:
            results = asyncio.run(run())
        finally:
            self._flush()
        return _results_or_raise(results)

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

    # --- one request --------------------------------------------------------------------------

    def _lookup(self, request: ChatRequest) -> tuple[str, str, ChatReply | None]:
        """(model, cache key, the cached reply or None) of `request`.

        Raises:
            ConfigError: no model for `request.role`.
        """
        model = self.model_for(request.role)
        params = self._params(request)
        if model.startswith(providers.SIM_PREFIX + "/"):
            # The simulator answers from the cases, not only the prompt: a changed case is a new request.
            params["sim_world"] = self._context.world_key()
        key = request_key(model, request.messages, params, request.sample)
        if self.cache is not None:
            entry = self.cache.get(key)
            if entry is not None:
                self.ledger.record_cached(request.role)
                return model, key, ChatReply(request, entry["text"], entry.get("data"), Usage.from_dict(entry["usage"]), cached=True, repaired=entry.get("repaired", False))
        return model, key, None

    def _serve(self, request: ChatRequest, model: str, key: str) -> ChatReply:
        """`_answer` and the failure count of the ledger (worker thread); a failed reply once closed."""
        if self._closed:
            reply = ChatReply(request, None, None, Usage(), error="the model client was closed before this request was served")
        else:
            reply = self._answer(request, model, key)
        if not reply.ok:
            self.ledger.record_failed(request.role)
        return reply

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

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        llm = self.config.llm
        return {"temperature": llm.temperature, "max_tokens": llm.max_output_tokens, "schema": request.schema}

    def _answer(self, request: ChatRequest, model: str, key: str) -> ChatReply:
        """Call the model, validate and repair, cache a success under `key` (worker thread).

        The reply carries the usage of all turns.
        """
        from frames_cli.llm.prompts import render
        from frames_cli.llm.structured import AnswerError, parse_answer

        if model.startswith(providers.SIM_PREFIX + "/"):
            # Read the simulator's world here, not inside litellm, so a bad case file is an
            # InputError naming file and line rather than a failed model call.
            self._context.world()
        usage = Usage()
        messages = list(request.messages)
        attempts = 0
        for repair in range(self.config.llm.repair_turns + 1):
            turn, n = self._call(request, model, messages, usage)
            attempts += n
            if turn.error is not None:
                return ChatReply(request, None, None, usage, error=turn.error, attempts=attempts, lost=turn.retriable)
            if request.schema is None:
                return self._cached(key, model, ChatReply(request, turn.text, None, usage, attempts=attempts))
            try:
                data = parse_answer(turn.text, request.schema)
            except AnswerError as exc:
                errors = exc.errors + (["the reply was cut off at the output token limit"] if turn.finish_reason == "length" else [])
                messages += [
                    {"role": "assistant", "content": turn.text or ""},
                    {"role": "user", "content": render("repair", errors="\n".join(f"- {e}" for e in errors))},
                ]
                continue
            return self._cached(key, model, ChatReply(request, turn.text, data, usage, attempts=attempts, repaired=repair > 0))
        return ChatReply(request, None, None, usage, error=f"invalid answer after {self.config.llm.repair_turns} repair turn(s): {'; '.join(errors)}",
                         attempts=attempts, lost=True)

    def _cached(self, key: str, model: str, reply: ChatReply) -> ChatReply:
        if self.cache is not None:
            self.cache.put(key, {"model": model, "text": reply.text, "data": reply.data, "usage": reply.usage.to_dict(), "repaired": reply.repaired})
        return reply

    def _call(self, request: ChatRequest, model: str, messages: list[dict[str, Any]], usage: Usage) -> tuple[CallOutcome, int]:
        """One model turn with retries (worker thread). Returns the outcome and the number of calls made.

        A failed outcome's `error` is final and redacted: the provider error for one that is not
        retried, else "gave up after N attempt(s)" with the last error (`retriable` kept True, so
        the reply is marked lost). Attempts are numbered from `request.retry` × (max_retries + 1). A call lost with its
        worker process (`llm.processes`) is re-sent as the same attempt, spool calls included:
        `llm.max_retries` counts provider failures, and the pool bounds losses (MAX_RESTARTS).

        Raises:
            BudgetExceeded: before a call, when the budget is spent.
            ModelSetupError: the provider refused the credentials or does not know the model (not
                retried; later requests for the same model raise it without a call).
        """
        llm = self.config.llm
        spool = model.startswith(providers.SPOOL_PREFIX + "/")
        timeout = self.config.spool.timeout_s + 2 * self.config.spool.poll_s if spool else llm.timeout_s
        max_retries = 0 if spool else llm.max_retries
        first = attempt = request.retry * (max_retries + 1)
        calls = 0
        while True:
            self._raise_if_refused(request, model)
            self.ledger.check()
            outcome = self._complete(request, model, messages, attempt, timeout, usage)
            calls += 1
            if outcome.error is None:
                return outcome, calls
            if outcome.setup:
                self._refused.setdefault(model, self._redact(outcome.error))
                self._raise_if_refused(request, model)
            if not outcome.retriable:
                return replace(outcome, error=self._redact(f"{model}: {outcome.error}")), calls
            if outcome.lost:
                continue
            if attempt - first == max_retries:
                return CallOutcome(error=self._redact(f"{model}: gave up after {attempt - first + 1} attempt(s); last error: {outcome.error}"),
                                   retriable=True), calls
            attempt += 1
            delay = min(llm.backoff_max_s, llm.backoff_base_s * 2 ** (attempt - first - 1))
            time.sleep(delay / 2 + random.uniform(0, delay / 2))

    def _raise_if_refused(self, request: ChatRequest, model: str) -> None:
        """Raise ModelSetupError when an earlier call of `model` was refused for good (no call is made)."""
        refused = self._refused.get(model)
        if refused is not None:
            self.ledger.record_failed(request.role)
            raise ModelSetupError(f"models.{request.role}: {refused}", Location(self.workspace.config_path))

    def _complete(self, request: ChatRequest, model: str, messages: list[dict[str, Any]], attempt: int, timeout: float, usage: Usage) -> CallOutcome:
        """One litellm call (worker thread); records ledger and audit whatever the outcome.

        The call runs in this thread, or in a CallPool worker process when `llm.processes` > 0.
        """
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "timeout": timeout,
            "temperature": self.config.llm.temperature,
            "max_tokens": self.config.llm.max_output_tokens,
            "metadata": {providers.CTX_KEY: self._ctx, providers.ATTEMPT_KEY: attempt, providers.SAMPLE_KEY: request.sample},
            # litellm's own logging callbacks: we keep our own audit log and need no second copy.
            "no-log": True,
        }
        if not model.startswith((providers.SIM_PREFIX + "/", providers.SPOOL_PREFIX + "/")):
            kwargs["drop_params"] = True
            if self.config.llm.api_base:
                kwargs["api_base"] = self.config.llm.api_base
            if request.schema is not None and self._supports_schema(model):
                kwargs["response_format"] = {"type": "json_schema", "json_schema": {"name": request.role, "schema": request.schema}}
        if self._closed:  # closed while this request was under way
            return CallOutcome(error="the model client was closed")
        # Before the audit record: a pool that cannot start (a script re-run without its
        # `__main__` guard in a worker) is no model call.
        pool = self._call_pool()
        start = time.monotonic()
        record: dict[str, Any] = {"role": request.role, "model": model, "tag": request.tag, "sample": request.sample, "attempt": attempt, "messages": messages}
        try:
            outcome = pool.call(kwargs) if pool is not None else invoke(kwargs)
        except Exception as exc:
            record.update(error=f"{type(exc).__name__}: {exc}", seconds=round(time.monotonic() - start, 4))
            self._log(record)
            raise
        if outcome.error is not None and self._closed:
            # Closed under this call: its provider context is gone, and frames-sim or spool then
            # report a BadRequestError that would read as a fault of the request.
            outcome = CallOutcome(error=f"the model client was closed during the call ({outcome.error})")
        if outcome.error is not None:
            record.update(error=outcome.error, seconds=round(time.monotonic() - start, 4))
            self._log(record)
            return outcome
        call_usage = Usage(outcome.prompt_tokens, outcome.completion_tokens, outcome.cost_usd, outcome.cached_prompt_tokens)
        self.ledger.record_call(request.role, call_usage)
        usage.add(call_usage)
        record.update(
            reply=outcome.text,
            finish_reason=outcome.finish_reason,
            usage=call_usage.to_dict(),
            system_fingerprint=outcome.fingerprint,
            seconds=round(time.monotonic() - start, 4),
        )
        self._log(record)
        return outcome

    def _call_pool(self) -> CallPool | None:
        """The worker processes of `llm.processes`, started on first use; None when it is 0.

        A closed client starts none (its closed pool, if it had one, fails every call).
        """
        processes = self.config.llm.processes
        if not processes:
            return None
        with self._pool_lock:
            if self._processes is None and not self._closed:
                from frames_cli.llm.callpool import CallPool

                sim = any(m and m.startswith(providers.SIM_PREFIX + "/") for m in vars(self.config.models).values())
                context = self._context
                self._processes = CallPool(
                    processes, self.config.llm.concurrency, self._ctx, context.root, context.simulator, context.spool, context.world() if sim else None
                )
            return self._processes

    def _log(self, record: dict[str, Any]) -> None:
        if self.audit is not None:
            record["time"] = time.time()
            self.audit.write(record)

    def _supports_schema(self, model: str) -> bool:
        if model not in self._schema_support:
            self._schema_support[model] = bool(providers.litellm_module().supports_response_schema(model=model))
        return self._schema_support[model]


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
