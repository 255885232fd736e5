"""Cached prompt tokens: read from the provider's usage, kept in replies, results and the ledger, priced at the
cached rate.

Invariants:
1. `usage.prompt_tokens_details.cached_tokens` reaches ChatReply.usage and the ledger's role totals.
2. The cost is litellm's, which prices cached prompt tokens at the model's `cache_read_input_token_cost`.
3. A reply without cached tokens keeps the usage record it had before (no new key).
"""

from __future__ import annotations

from typing import Any

import pytest

from frames_cli.llm.messages.types import ChatRequest, Usage

PRICE = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "cache_read_input_token_cost": 1e-7}


@pytest.fixture
def caching():
    """A litellm custom provider `caching/<x>` whose replies say 800 of their 1,000 prompt tokens were cached."""
    from litellm.llms.custom_llm import CustomLLM
    from litellm.types.utils import ModelResponse, PromptTokensDetailsWrapper
    from litellm.types.utils import Usage as LitellmUsage
    from litellm.utils import custom_llm_setup

    from frames_cli.llm.transport.providers import litellm_module

    litellm = litellm_module()

    class Handler(CustomLLM):
        def completion(self, model: str, messages: list, *args: Any, model_response: Any = None, **kwargs: Any) -> Any:
            response = model_response or ModelResponse()
            response.model = f"caching/{model}"
            response.choices[0].message.content = '{"answer": "yes", "skills_used": []}'
            response.choices[0].finish_reason = "stop"
            response.usage = LitellmUsage(prompt_tokens=1000, completion_tokens=10, total_tokens=1010,
                                          prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=800))
            return response

    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "caching"] + [
        {"provider": "caching", "custom_handler": Handler()}
    ]
    custom_llm_setup()
    litellm.register_model({"caching/m": {**PRICE, "litellm_provider": "caching", "mode": "chat"}})
    yield
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "caching"]


def test_cached_prompt_tokens_reach_the_reply_and_the_ledger_at_the_cached_price(sim_workspace, caching) -> None:
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.workspace.config import with_overrides

    config = with_overrides(sim_workspace.config, "models", executor="caching/m")
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        reply = client.chat(ChatRequest("executor", [{"role": "user", "content": "Case id: x"}]))
        totals = client.ledger.to_dict()["roles"]["executor"]
    assert reply.ok and reply.usage.cached_prompt_tokens == 800 and reply.usage.prompt_tokens == 1000
    expected = (
        200 * PRICE["input_cost_per_token"]
        + 800 * PRICE["cache_read_input_token_cost"]
        + 10 * PRICE["output_cost_per_token"]
    )
    assert reply.usage.cost_usd == pytest.approx(expected)
    assert totals["cached_prompt_tokens"] == 800 and totals["cost_usd"] == pytest.approx(expected)


def test_usage_without_cached_tokens_keeps_its_record() -> None:
    assert Usage(5, 1, None).to_dict() == {"prompt_tokens": 5, "completion_tokens": 1, "cost_usd": None}
    both = Usage(5, 1, 0.1, 3)
    both.add(Usage(2, 1, None, 1))
    assert Usage.from_dict(both.to_dict()) == Usage(7, 2, 0.1, 4)
