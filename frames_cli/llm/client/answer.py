"""One request answered, in the worker thread that serves it: the cache, the model, retries with
backoff, the repair turn, the refused-model stop, ledger and audit (llm/client/client.py schedules requests)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from frames_cli.errors import ConfigError, Location, ModelSetupError
from frames_cli.llm.messages.types import ChatReply, ChatRequest, Usage
from frames_cli.llm.store.cache import request_key
from frames_cli.llm.transport import providers
from frames_cli.llm.transport.batch_models import batch_provider, batched_roles
from frames_cli.llm.transport.calls import CallOutcome, invoke

if TYPE_CHECKING:
    from frames_cli.llm.store.audit import AuditLog, Redactor
    from frames_cli.llm.store.cache import ResponseCache
    from frames_cli.llm.store.ledger import Ledger
    from frames_cli.llm.transport.batch import BatchJournal
    from frames_cli.llm.transport.callpool import CallPool
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace


def model_for(config: FramesConfig, role: str) -> str:
    """The model string of `role` (`models.<role>` in frames.yaml).

    Raises:
        ConfigError: the role has no model configured (exit code 2).
    """
    model = getattr(config.models, role, None)
    if not model:
        raise ConfigError(f"no model configured for this role: set `models.{role}` in frames.yaml "
                          f"(any litellm model string, or frames-sim/{role} offline)", None)
    return model


class Answerer:
    """Answers ModelClient's requests, one whole request per call, in the calling worker thread.

    Args:
        workspace, config: the client's.
        ledger, audit, cache: where calls are counted, logged (None: no run folder) and cached (None: off).
        redact: removes secrets from error texts.
        context, ctx: the provider context and its registration key (`providers.register`).
        call_pool: the client's worker processes, started on first use (None when `llm.processes` is 0).
        closed: whether the client was closed (a request or call then fails as "closed").
        batch: the batch journal (`llm.batch`, llm/transport/batch.py), or None when batch mode is off; the
            calls of a batched role whose model has a batch API are answered from it.
    """

    def __init__(
        self, workspace: Workspace, config: FramesConfig, *, ledger: Ledger, audit: AuditLog | None,
        cache: ResponseCache | None, redact: Redactor, context: providers.ProviderContext, ctx: str,
        call_pool: Callable[[], CallPool | None], closed: Callable[[], bool], batch: BatchJournal | None = None,
    ):
        self.workspace = workspace
        self.config = config
        self.ledger = ledger
        self.audit = audit
        self.cache = cache
        self._redact = redact
        self._context = context
        self._ctx = ctx
        self._call_pool = call_pool
        self._closed = closed
        self._schema_support: dict[str, bool] = {}
        # model → the setup error (credentials, unknown model) its first failed call got
        self._refused: dict[str, str] = {}
        self.batch = batch
        self._batch_roles = set(batched_roles(config)) if batch is not None else set()
        self._batched: dict[tuple[str, str], bool] = {}

    def lookup(self, request: ChatRequest) -> tuple[str, str, ChatReply | None]:
        """(model, cache key, the cached reply or None) of `request`.

        Raises:
            ConfigError: no model for `request.role`.
        """
        model = model_for(self.config, request.role)
        params = self._params(request)
        if model.startswith(providers.SIM_PREFIX + "/"):
            # The simulator answers from the cases, not only the prompt: a changed case is a new request.
            params["sim_world"] = self._context.world_key()
        key = request_key(model, request.messages, params, request.sample)
        if self.cache is not None:
            entry = self.cache.get(key)
            if entry is not None:
                self.ledger.record_cached(request.role)
                return (
                    model, key,
                    ChatReply(
                        request, entry["text"], entry.get("data"), Usage.from_dict(entry["usage"]), cached=True,
                        repaired=entry.get("repaired", False),
                    ),
                )
        return model, key, None

    def serve(self, request: ChatRequest, model: str, key: str) -> ChatReply:
        """`_answer` and the failure count of the ledger (worker thread); a failed reply once closed."""
        if self._closed():
            reply = ChatReply(
                request, None, None, Usage(), error="the model client was closed before this request was served"
            )
        else:
            reply = self._answer(request, model, key)
        if not reply.ok:
            self.ledger.record_failed(request.role)
        return reply

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        llm = self.config.llm
        return {"temperature": llm.temperature, "max_tokens": llm.max_output_tokens, "schema": request.schema}

    def _answer(self, request: ChatRequest, model: str, key: str) -> ChatReply:
        """Call the model, validate and repair, cache a success under `key` (worker thread).

        The reply carries the usage of all turns.
        """
        from frames_cli.llm.messages.prompts import render
        from frames_cli.llm.messages.structured import AnswerError, parse_answer

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
                errors = exc.errors + (
                    ["the reply was cut off at the output token limit"] if turn.finish_reason == "length" else []
                )
                messages += [
                    {"role": "assistant", "content": turn.text or ""},
                    {"role": "user", "content": render("repair", errors="\n".join(f"- {e}" for e in errors))},
                ]
                continue
            return self._cached(
                key, model, ChatReply(request, turn.text, data, usage, attempts=attempts, repaired=repair > 0)
            )
        return ChatReply(
            request, None, None, usage,
            error=f"invalid answer after {self.config.llm.repair_turns} repair turn(s): {'; '.join(errors)}",
            attempts=attempts, lost=True,
        )

    def _cached(self, key: str, model: str, reply: ChatReply) -> ChatReply:
        if self.cache is not None:
            self.cache.put(
                key,
                {
                    "model": model, "text": reply.text, "data": reply.data, "usage": reply.usage.to_dict(),
                    "repaired": reply.repaired,
                },
            )
        return reply

    def _call(
        self, request: ChatRequest, model: str, messages: list[dict[str, Any]], usage: Usage
    ) -> tuple[CallOutcome, int]:
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
                return CallOutcome(
                    error=self._redact(
                        f"{model}: gave up after {attempt - first + 1} attempt(s); last error: {outcome.error}"
                    ),
                    retriable=True,
                ), calls
            attempt += 1
            if self.is_batched(request.role, model):
                continue  # a batch line's retry goes into a later batch: no wait here
            delay = min(llm.backoff_max_s, llm.backoff_base_s * 2 ** (attempt - first - 1))
            wait = delay / 2 + random.uniform(0, delay / 2)
            self._context.notices.say(
                f"retry {model}",
                f"{model}: {self._redact(_short(outcome.error))}; next try in {wait:.1f} s "
                f"(retry {attempt - first} of {max_retries}; calls failing alike are retried too)",
            )
            time.sleep(wait)

    def _raise_if_refused(self, request: ChatRequest, model: str) -> None:
        """Raise ModelSetupError when an earlier call of `model` was refused for good (no call is made)."""
        refused = self._refused.get(model)
        if refused is not None:
            self.ledger.record_failed(request.role)
            raise ModelSetupError(f"models.{request.role}: {refused}", Location(self.workspace.config_path))

    def _complete(
        self, request: ChatRequest, model: str, messages: list[dict[str, Any]], attempt: int, timeout: float,
        usage: Usage,
    ) -> CallOutcome:
        """One litellm call (worker thread); records ledger and audit whatever the outcome.

        The call runs in this thread, or in a CallPool worker process when `llm.processes` > 0.
        """
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "timeout": timeout,
            "temperature": self.config.llm.temperature,
            "max_tokens": self.config.llm.max_output_tokens,
            "metadata": {
                providers.CTX_KEY: self._ctx, providers.ATTEMPT_KEY: attempt, providers.SAMPLE_KEY: request.sample,
            },
            # litellm's own logging callbacks: we keep our own audit log and need no second copy.
            "no-log": True,
        }
        if not model.startswith((providers.SIM_PREFIX + "/", providers.SPOOL_PREFIX + "/")):
            kwargs["drop_params"] = True
            if self.config.llm.api_base:
                kwargs["api_base"] = self.config.llm.api_base
            if request.schema is not None and self._supports_schema(model):
                kwargs["response_format"] = {
                    "type": "json_schema", "json_schema": {"name": request.role, "schema": request.schema},
                }
        if self._closed():  # closed while this request was under way
            return CallOutcome(error="the model client was closed")
        batched = self.is_batched(request.role, model)
        # Before the audit record: a pool that cannot start (a script re-run without its
        # `__main__` guard in a worker) is no model call.
        pool = None if batched else self._call_pool()
        start = time.monotonic()
        record: dict[str, Any] = {
            "role": request.role, "model": model, "tag": request.tag, "sample": request.sample, "attempt": attempt,
            "messages": messages,
        }
        if batched:
            assert self.batch is not None
            record["batch"] = True
            outcome = self.batch.outcome(kwargs)  # BatchWait: not answered yet, no call made, nothing to log
        else:
            try:
                outcome = pool.call(kwargs) if pool is not None else invoke(kwargs)
            except Exception as exc:
                record.update(error=f"{type(exc).__name__}: {exc}", seconds=round(time.monotonic() - start, 4))
                self._log(record)
                raise
        if outcome.error is not None and self._closed():
            # Closed under this call: its provider context is gone, and frames-sim or spool then
            # report a BadRequestError that would read as a fault of the request.
            outcome = CallOutcome(error=f"the model client was closed during the call ({outcome.error})")
        if outcome.error is not None:
            record.update(error=outcome.error, seconds=round(time.monotonic() - start, 4))
            self._log(record)
            return outcome
        call_usage = Usage(
            outcome.prompt_tokens, outcome.completion_tokens, outcome.cost_usd, outcome.cached_prompt_tokens
        )
        self.ledger.record_call(request.role, call_usage, batch=batched)
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

    def is_batched(self, role: str, model: str) -> bool:
        """Whether calls of `role` on `model` go to the batch API (`llm.batch` names the role and the
        model's provider has one: llm/transport/batch_models.BATCH_PROVIDERS)."""
        if role not in self._batch_roles:
            return False
        key = (role, model)
        if key not in self._batched:
            self._batched[key] = batch_provider(model) is not None
        return self._batched[key]

    def _log(self, record: dict[str, Any]) -> None:
        if self.audit is not None:
            record["time"] = time.time()
            self.audit.write(record)

    def _supports_schema(self, model: str) -> bool:
        if model not in self._schema_support:
            self._schema_support[model] = bool(providers.litellm_module().supports_response_schema(model=model))
        return self._schema_support[model]


def _short(error: str, limit: int = 200) -> str:
    """A provider error on one line, cut to `limit` characters (litellm repeats its class name and
    appends long provider payloads)."""
    from frames_cli.sanitize import one_line

    text = one_line(error)
    return text if len(text) <= limit else text[: limit - 1] + "…"
