"""The `frames-sim` litellm custom provider: routes `frames-sim/<role>` to the role's behaviour."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from litellm.llms.custom_llm import CustomLLM

from frames_cli.tokens import approx_tokens
from frames_cli.llm.transport.providers import ATTEMPT_KEY, SAMPLE_KEY, SIM_PREFIX, SIM_PRICE, context_of, make_response
from frames_cli.sim import coldstart, diagnoser, executor, faults, generator, judge, rewriter
from frames_cli.sim.base import Behaviour, SimCall

BEHAVIOURS: dict[str, Behaviour] = {
    "executor": executor.behave,
    "diagnoser": diagnoser.behave,
    "rewriter": rewriter.behave,
    "generator": generator.behave,
    "judge": judge.behave,
    "coldstart": coldstart.behave,
}

#: Carried in every reply (`system_fingerprint`, hence in the audit log): what answered.
FINGERPRINT = "frames-sim: a model of LLM behaviour, not an LLM"


class SimProvider(CustomLLM):
    """A model of LLM behaviour, not an LLM (DESIGN §8), behind litellm's custom-provider door.

    Per call: sleep `simulator.latency_s` (a Timeout when that exceeds the call's timeout), draw
    the faults of `simulator.faults` (rate limits and timeouts are raised as litellm's exceptions;
    malformed and truncated replies are returned), then answer with the role's behaviour as JSON.
    Draws depend on (seed, role, sample, prompt, attempt), so a retry can succeed where the first
    attempt failed and a rerun repeats everything. Usage: ⌈characters / 4⌉ tokens each way; cost
    from SIM_PRICE, the price registered with litellm (set here so litellm need not compute it).
    """

    def completion(
        self, model: str, messages: list, *args: Any, litellm_params: dict | None = None, timeout: Any = None,
        model_response: Any = None, **kwargs: Any,
    ) -> Any:
        """Answer one call for role `model` (litellm passes the name without `frames-sim/`).

        Args:
            messages: chat messages; their contents, joined, are the prompt the role reads.
            litellm_params: carries the ModelClient's metadata (context key, sample, attempt).
            timeout: the call's timeout in seconds; latency beyond it becomes a Timeout.
            model_response: litellm's empty ModelResponse for this call, filled in and returned.

        Returns:
            a litellm ModelResponse with model `frames-sim/<role>`, usage in tokens and cost in USD.

        Raises:
            litellm.BadRequestError: an unknown role, or a call not made through a ModelClient.
            litellm.RateLimitError, litellm.Timeout: a drawn fault, or latency over the timeout.
        """
        import litellm

        context, metadata = context_of(litellm_params)
        behaviour = BEHAVIOURS.get(model)
        if behaviour is None:
            raise litellm.BadRequestError(
                f"unknown simulated role {model!r}; known: {', '.join(BEHAVIOURS)}", model=model,
                llm_provider=SIM_PREFIX,
            )
        cfg = context.simulator
        prompt = "\n\n".join(str(m.get("content") or "") for m in messages)
        call = SimCall(model, prompt, int(metadata.get(SAMPLE_KEY, 0)), cfg, context.world())
        drawn = faults.draw(cfg.faults, lambda: call.rng("faults", metadata.get(ATTEMPT_KEY, 0)))
        limit = float(timeout) if isinstance(timeout, (int, float)) else None
        if cfg.latency_s:
            time.sleep(min(cfg.latency_s, limit) if limit else cfg.latency_s)
            if limit is not None and cfg.latency_s > limit:
                raise litellm.Timeout(
                    f"frames-sim: latency {cfg.latency_s} s exceeds the {limit} s timeout", model=model,
                    llm_provider=SIM_PREFIX,
                )
        faults.raise_transient(drawn, model, limit)
        text, finish = faults.damage(json.dumps(behaviour(call), ensure_ascii=False), drawn)
        prompt_tokens, completion_tokens = approx_tokens(prompt), approx_tokens(text)
        cost = (
            prompt_tokens * SIM_PRICE["input_cost_per_token"] + completion_tokens * SIM_PRICE["output_cost_per_token"]
        )
        return make_response(
            f"{SIM_PREFIX}/{model}", text, finish, prompt_tokens, completion_tokens, fingerprint=FINGERPRINT,
            cost_usd=cost, into=model_response,
        )

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
        """`completion` in a worker thread (its latency is a blocking sleep); same returns and errors."""
        return await asyncio.to_thread(self.completion, model, messages, *args, **kwargs)

