"""Our litellm custom providers (`frames-sim/`, `spool/`): one-time set-up, per-client context, replies.

The providers register themselves: `registry.PROVIDERS` names each provider's module, and a module
whose provider is a litellm custom provider has `litellm_provider() -> LiteLLMProvider`. This module
imports none of them (the simulator, `frames_cli.sim`, depends on this module, not the reverse).
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import os
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.llm.transport.notices import Notices, SpoolWaits
# The simulator's model names are frames.yaml's (re-exported: the model layer and the simulator name them here).
from frames_cli.workspace.config import SIM_PREFIX as SIM_PREFIX
from frames_cli.workspace.config import SIM_ROLES as SIM_ROLES

if TYPE_CHECKING:
    from contextvars import ContextVar

    from frames_cli.workspace.config import SimulatorConfig, SpoolConfig

SPOOL_PREFIX = "spool"
#: USD per token registered with litellm for `frames-sim/<role>` so cost accounting runs offline;
#: a small hosted model's list price (0.15 $ / 0.60 $ per million input / output tokens).
SIM_PRICE = {
    "input_cost_per_token": 0.15e-6, "output_cost_per_token": 0.60e-6, "cache_creation_input_token_cost": 0.0,
    "cache_read_input_token_cost": 0.0,
}
#: Metadata keys the client sends along each call (litellm hands `metadata` to custom providers).
CTX_KEY, ATTEMPT_KEY, SAMPLE_KEY = "frames_ctx", "frames_attempt", "frames_sample"

def simulator_notice(models: Mapping[str, str | None]) -> str | None:
    """One line for people when any role runs on the simulator, else None.

    Results and costs of such a run describe the simulator (a model of LLM behaviour, not an LLM)
    priced at SIM_PRICE, so every report that shows them says so.
    """
    roles = sorted(role for role, model in models.items() if model and model.startswith(f"{SIM_PREFIX}/"))
    if not roles:
        return None
    price = (
        f"${SIM_PRICE['input_cost_per_token'] * 1e6:.2f} / ${SIM_PRICE['output_cost_per_token'] * 1e6:.2f} per million "
        "tokens"
    )
    return (
        f"Simulated: {', '.join(roles)} ran on frames-sim, a simulator of model behaviour, not a model; "
        f"pass rates describe the simulator and costs use a nominal {price}."
    )


@dataclass(frozen=True)
class LiteLLMProvider:
    """What a provider module registers with litellm (see the module docstring).

    Attributes:
        prefix: the model-string prefix ("frames-sim" routes "frames-sim/<role>").
        handler: the litellm `CustomLLM` instance that answers its calls.
        models: model name → litellm price entry ({input_cost_per_token, ...}), registered with
            `litellm.register_model` so cost accounting works offline; {} for none.
    """

    prefix: str
    handler: Any
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def sim_models() -> dict[str, dict[str, Any]]:
    """The price entries of `frames-sim/<role>` for `LiteLLMProvider.models` (SIM_PRICE per role)."""
    return {f"{SIM_PREFIX}/{role}": {**SIM_PRICE, "litellm_provider": SIM_PREFIX, "mode": "chat"} for role in SIM_ROLES}


def registered_providers() -> list[LiteLLMProvider]:
    """Every custom provider listed in `registry.PROVIDERS`, loaded (imports the provider modules)."""
    from frames_cli.registry import PROVIDERS

    modules = [PROVIDERS.load(name) for name in PROVIDERS.names()]
    return [m.litellm_provider() for m in modules if hasattr(m, "litellm_provider")]


_lock = threading.Lock()
_litellm: Any = None
_contexts: dict[str, ProviderContext] = {}


@dataclass
class ProviderContext:
    """What our providers need from the client that calls them.

    Attributes:
        root: the workspace root (the spool folder is relative to it).
        simulator / spool: those sections of frames.yaml.
        load_world: builds the simulator's world (`sim.world.SimWorld`, opaque here); called at
            most once, on first use.
        closed: set when the client closes, so a spool wait stops instead of holding the process.
        notices: lines about waits outside frames (a provider retried, spool answers pending).
        spool_waits: the spool requests waiting for answers, counted for those lines.
    """

    root: Path
    simulator: SimulatorConfig
    spool: SpoolConfig
    load_world: Callable[[], Any]
    closed: threading.Event = field(default_factory=threading.Event, repr=False)
    notices: Notices = field(default_factory=Notices, repr=False)
    spool_waits: SpoolWaits = field(init=False, repr=False)
    _world: Any = field(default=None, repr=False)
    _world_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _world_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.spool_waits = SpoolWaits(self.notices)

    def world(self) -> Any:
        """The simulator's world, loaded on first use (InputError for a bad case file)."""
        with self._world_lock:
            if self._world is None:
                self._world = self.load_world()
            return self._world

    def world_key(self) -> str:
        """Hex sha256 of everything a simulated answer depends on besides the prompt: the
        simulator's settings and every case of its world (expected answers, evidence, checks).

        Part of the response-cache key of `frames-sim` requests, so editing a case or a
        simulator setting is never answered from the cache of the old one. The whole world, not
        the one case a prompt names: diagnoser and judge prompts read several cases.
        """
        world = self.world()
        with self._world_lock:
            if self._world_key is None:
                cases = sorted((c.to_dict() for c in world.cases.values()), key=lambda c: str(c.get("id")))
                blob = json.dumps(
                    [dataclasses.asdict(self.simulator), cases], sort_keys=True, ensure_ascii=False, default=str
                )
                self._world_key = hashlib.sha256(blob.encode("utf-8")).hexdigest()
            return self._world_key


def litellm_module() -> Any:
    """Import litellm once, configured: local price table (no download), quiet, our providers in.

    Importing litellm costs seconds, so only code that is about to call a model calls this.
    """
    global _litellm
    if _litellm is not None:
        return _litellm
    with _lock:
        if _litellm is None:
            set_litellm_environment()
            # The import and the set-up below make about a million objects that live as long as
            # the process, and each counts towards the collector's thresholds: 5 full
            # collections ran meanwhile, found nothing and took 0.1-0.6 s each. Paused, the
            # import took 2.7 s of CPU instead of 3.3 s (3 runs each); the collection below
            # finds what garbage there is.
            enabled = gc.isenabled()
            gc.disable()
            try:
                import litellm

                litellm.suppress_debug_info = True
                # litellm loads its default tokenizer (tens of MB, ~0.2 s) on the first completion;
                # loading it here keeps it out of the first call's timeout and lets forked
                # `frames eval --jobs` workers share one copy.
                litellm.encoding  # noqa: B018
                ours = registered_providers()
                prefixes = {p.prefix for p in ours}
                others = [p for p in (litellm.custom_provider_map or []) if p.get("provider") not in prefixes]
                litellm.custom_provider_map = others + [
                    {"provider": p.prefix, "custom_handler": p.handler} for p in ours
                ]
                for provider in ours:
                    if provider.models:
                        litellm.register_model({k: dict(v) for k, v in provider.models.items()})
                complete_response_models()
            finally:
                if enabled:
                    gc.enable()
            # Every full collection of the cycle collector walked those objects again (~0.15 s
            # each, holding the GIL: 8 of them in one bench/llm_overhead.py run). Frozen, they
            # are left out of collections. An evaluation that was already running when litellm
            # got imported unfreezes everything as it ends (evaluation/runner.py), and from then
            # on full collections walk these objects again, as they did before.
            gc.collect()
            gc.freeze()
            _litellm = litellm
    return _litellm


def complete_response_models() -> int:
    """Build now, in one thread, the pydantic models of litellm's responses that it leaves to be
    built on first use (`Usage`, `ModelResponse`, `Message`, … of `litellm.types.utils`; about 0.1 s).

    pydantic's lazy `model_rebuild` is not thread-safe (pydantic issue #13419): when the first
    responses of a process are made by several threads at once, one of them can find the class
    half rebuilt and fail with "type object 'Usage' has no attribute '__pydantic_core_schema__'",
    which litellm reports as an APIConnectionError. Every call-pool worker and `frames eval --jobs`
    worker answers its first calls from several threads, and forked workers share what is built
    here. Returns how many models were built (0 when litellm built them all already).
    """
    import inspect

    import pydantic
    from litellm.types import utils

    pending = [c for c in vars(utils).values() if inspect.isclass(c) and issubclass(c, pydantic.BaseModel)
               and c.__module__ == utils.__name__ and not c.__pydantic_complete__]
    for model in pending:
        model.model_rebuild()
    return len(pending)


def set_litellm_environment() -> None:
    """Tell litellm, before its import, to read its bundled price table instead of downloading one."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"


def internal_call_flag() -> ContextVar[bool]:
    """litellm's context flag for its own nested calls; set, it skips the background logging step.

    litellm (pinned 1.108.14) submits every finished `completion` to a logging thread that builds
    a standard logging payload even for `no-log` calls, then drops it. Cost and usage are set on
    the response before that step, so nothing frames reads depends on it. The flag lives in a
    private module: tests/llm/test_litellm_internals.py fails if a litellm upgrade moves it.
    """
    from litellm._internal_context import is_internal_call

    return is_internal_call


def register(context: ProviderContext, key: str | None = None) -> str:
    """Make `context` reachable from provider calls; returns the key the client sends as metadata.

    `key`: the key to use (a CallPool worker takes its client's); by default a new random one.
    """
    key = key or uuid.uuid4().hex
    _contexts[key] = context
    return key


def unregister(key: str) -> None:
    """Forget the context registered under `key` (calls carrying it are then refused)."""
    _contexts.pop(key, None)


def context_of(litellm_params: dict[str, Any] | None) -> tuple[ProviderContext, dict[str, Any]]:
    """The context and metadata of one provider call.

    Raises:
        litellm.BadRequestError: the call did not come through a live ModelClient.
    """
    metadata = (litellm_params or {}).get("metadata") or {}
    context = _contexts.get(metadata.get(CTX_KEY, ""))
    if context is None:
        import litellm

        raise litellm.BadRequestError(
            "frames providers are called through frames' ModelClient only", model="", llm_provider="frames"
        )
    return context, metadata


def make_response(
    model: str, text: str, finish_reason: str, prompt_tokens: int, completion_tokens: int, *,
    fingerprint: str | None = None, cost_usd: float | None = None, into: Any = None,
) -> Any:
    """A litellm ModelResponse with one choice and explicit usage (litellm needs it to price the reply).

    `into`: the empty ModelResponse litellm hands a custom provider as `model_response`; filled in and
    returned, which saves building a second one per call (a measurable share of a simulated call's
    CPU). `cost_usd`, when given, is stored as litellm's `response_cost`, which litellm then uses as is.
    """
    from litellm.types.utils import ModelResponse, Usage

    # Any: ModelResponse sets `usage` in its __init__ without declaring it, so its type has no `usage`.
    response: Any = ModelResponse() if into is None else into
    response.model = model
    choice = response.choices[0]
    choice.message.content = text
    choice.finish_reason = finish_reason
    response.system_fingerprint = fingerprint
    response.usage = Usage(
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, total_tokens=prompt_tokens + completion_tokens
    )
    if cost_usd is not None:
        response._hidden_params["response_cost"] = cost_usd
    return response
