"""First contact with a provider: which key each role's model needs, its price, and one minimal call per role."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from frames_cli.errors import FramesError, Location, ModelSetupError
from frames_cli.llm.transport import providers

if TYPE_CHECKING:
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

#: Every role a model string can be set for, in the order frames.yaml lists them.
ROLES = ("executor", "diagnoser", "rewriter", "generator", "judge", "keys", "coldstart")
#: The one minimal request of `check_models` (a short, fixed answer: a few output tokens).
PING = "Reply with the single word OK."
PING_TOKENS = 16


@dataclass(frozen=True)
class Price:
    """What litellm's price table says a model costs, in USD per million tokens."""

    input_per_million: float
    output_per_million: float

    def __str__(self) -> str:
        return f"${self.input_per_million:g} / ${self.output_per_million:g} per M tokens in / out"


@dataclass(frozen=True)
class RoleCheck:
    """The answer of one role to `check_models`.

    Attributes:
        role / model: the role and its model string (`models.<role>`).
        ok: the model answered the minimal call.
        detail: what answered, or why not (the provider's error, a key not set, not checked).
        price: litellm's price for the model, None when litellm does not know it.
        latency_s: seconds the call took (None when no call was made).
        prompt_tokens / completion_tokens: the call's usage (tokens).
    """

    role: str
    model: str
    ok: bool
    detail: str
    price: Price | None = None
    latency_s: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_json(self) -> dict:
        """JSON-ready form; price as {"input_per_million", "output_per_million"} USD or None."""
        price = (
            None if self.price is None
            else {
                "input_per_million": self.price.input_per_million, "output_per_million": self.price.output_per_million,
            }
        )
        return {
            "role": self.role, "model": self.model, "ok": self.ok, "detail": self.detail, "price": price,
            "latency_s": self.latency_s, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def is_provider_model(model: str) -> bool:
    """True for a model litellm sends to a provider (not frames-sim, not spool)."""
    return not model.startswith((providers.SIM_PREFIX + "/", providers.SPOOL_PREFIX + "/"))


def price_of(model: str, batch: bool = False) -> Price | None:
    """litellm's price of `model` (USD per million tokens), None when its table has no price.

    frames-sim has the nominal price it registers with litellm; spool models have none. With
    `batch` (the role is in `llm.batch`), the provider's batch price where the model has a batch
    API and litellm knows that price (llm/transport/batch_models.batch_price), else the regular one.
    """
    if model.startswith(providers.SPOOL_PREFIX + "/"):
        return None
    if batch:
        from frames_cli.llm.transport.batch_models import batch_price, batch_provider

        if batch_provider(model) is not None:
            cost_in, cost_out, _ = batch_price(model)
            if cost_in is not None and cost_out is not None:
                return Price(round(cost_in * 1e6, 6), round(cost_out * 1e6, 6))
    litellm = providers.litellm_module()
    try:
        info = litellm.get_model_info(model=model)
    except Exception:  # noqa: BLE001 - litellm raises a bare Exception for a model it does not know
        return None
    cost_in, cost_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if cost_in is None or cost_out is None:
        return None
    return Price(round(cost_in * 1e6, 6), round(cost_out * 1e6, 6))


def missing_keys(model: str, config: FramesConfig) -> list[str]:
    """The API-key environment variables `model` needs and that are not set (litellm's
    `validate_environment`); empty for our own providers and when `llm.api_base` points at a server
    of the user's own (vLLM, Ollama: often no key at all).

    Only variables named `*_API_KEY` count: cloud credentials (AWS, Vertex) may come from files
    or instance roles litellm cannot see, and refusing them would stop runs that work.
    """
    if not is_provider_model(model) or config.llm.api_base:
        return []
    found = providers.litellm_module().validate_environment(model=model)
    return [key for key in found.get("missing_keys") or [] if key.endswith("_API_KEY")]


def require_keys(ws: Workspace, config: FramesConfig, roles: Sequence[str]) -> None:
    """Refuse to start when a role's model needs an API key that is not set, before any call or record.

    Raises:
        ModelSetupError: naming frames.yaml, each role, its model, its provider and the variable (exit 2).
    """
    problems = []
    for role in roles:
        model = getattr(config.models, role, None)
        if not model:
            continue
        keys = missing_keys(model, config)
        if keys:
            problems.append(
                f"models.{role}: {model} (provider {_provider(model)}): no API key; set the environment variable "
                f"{' or '.join(keys)} (not set here)"
            )
    if problems:
        raise ModelSetupError("; ".join(problems), Location(ws.config_path))


def _provider(model: str) -> str:
    litellm = providers.litellm_module()
    try:
        return litellm.get_llm_provider(model)[1]
    except litellm.BadRequestError:
        return "unknown"


def check_models(ws: Workspace, config: FramesConfig, roles: Sequence[str] = ROLES) -> list[RoleCheck]:
    """One minimal call (PING, at most PING_TOKENS output tokens, no cache, no retry) per configured role.

    Roles without a model are left out. Spool models are not called (a person would have to
    answer); frames-sim roles are called like any model. A role whose key is not set is reported
    without a call. Calls go through ModelClient (the same door as every run), one role at a time,
    so the latency is that role's alone.
    """
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.llm.messages.types import ChatRequest
    from frames_cli.workspace.config import with_overrides

    quick = with_overrides(
        with_overrides(config, "llm", max_retries=0, repair_turns=0, max_output_tokens=PING_TOKENS, processes=0),
        "budget", max_tokens=None, max_usd=None,
    )
    out = []
    with ModelClient(ws, quick, use_cache=False) as client:
        for role in roles:
            model = getattr(config.models, role, None)
            if not model:
                continue
            price = price_of(model)
            if model.startswith(providers.SPOOL_PREFIX + "/"):
                out.append(
                    RoleCheck(
                        role, model, False, f"not called: spool models are answered by a person ({config.spool.dir})",
                        price,
                    )
                )
                continue
            keys = missing_keys(model, config)
            if keys:
                out.append(
                    RoleCheck(
                        role, model, False,
                        f"not called: no API key; set {' or '.join(keys)} (provider {_provider(model)})", price,
                    )
                )
                continue
            start = time.monotonic()
            try:
                reply = client.chat(ChatRequest(role, [{"role": "user", "content": PING}], tag="check-models"))
            except FramesError as exc:
                out.append(RoleCheck(role, model, False, str(exc), price, round(time.monotonic() - start, 3)))
                continue
            seconds = round(time.monotonic() - start, 3)
            usage = reply.usage
            detail = "answered" if reply.ok else (reply.error or "failed")
            out.append(
                RoleCheck(role, model, reply.ok, detail, price, seconds, usage.prompt_tokens, usage.completion_tokens)
            )
    return out
