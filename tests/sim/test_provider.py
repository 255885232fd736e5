"""The frames-sim reply object: litellm's own ModelResponse, filled in, priced and marked.

Invariants:
1. `make_response(into=...)` returns the object it was given, equal field for field to a newly
   built reply (litellm hands custom providers an empty one; filling it saves building another).
2. Through litellm, a simulated reply carries usage ⌈characters / 4⌉ each way, its cost at
   SIM_PRICE, the simulator's fingerprint and the finish reason of the drawn faults.
"""

from __future__ import annotations

import math

import pytest

from frames_cli.llm.transport import providers
from frames_cli.llm.client.client import ModelClient
from frames_cli.llm.transport.providers import SIM_PRICE, litellm_module, make_response
from frames_cli.sim.provider import FINGERPRINT


def without_identity(response) -> dict:
    data = response.model_dump()
    del data["id"], data["created"]
    return data


@pytest.mark.parametrize("fingerprint, finish", [(None, "stop"), (FINGERPRINT, "length")])
def test_filled_reply_equals_a_built_one(fingerprint, finish):
    litellm_module()
    from litellm.types.utils import ModelResponse

    given = ModelResponse()
    filled = make_response("frames-sim/judge", '{"pass": true}', finish, 12, 4, fingerprint=fingerprint, cost_usd=0.5,
                           into=given)
    built = make_response("frames-sim/judge", '{"pass": true}', finish, 12, 4, fingerprint=fingerprint, cost_usd=0.5)
    assert filled is given and filled is not built
    assert without_identity(filled) == without_identity(built)
    assert filled.choices[0].message.content == '{"pass": true}' and filled.choices[0].finish_reason == finish
    assert (filled.usage.prompt_tokens, filled.usage.completion_tokens, filled.usage.total_tokens) == (12, 4, 16)
    assert filled._hidden_params["response_cost"] == 0.5


@pytest.mark.parametrize("truncated, finish", [(0.0, "stop"), (1.0, "length")])
def test_reply_through_litellm_is_priced_and_marked(sim_workspace, truncated, finish):
    litellm = litellm_module()
    config = sim_workspace.configured(faults={"truncated": truncated})
    # Called through litellm directly (as bench/llm_overhead.py does), to see litellm's response object.
    prompt = "Case id: refund-1\n\nAnswer:\n```json\n\"no\"\n```\n"
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        response = litellm.completion(
            model="frames-sim/judge", messages=[{"role": "user", "content": prompt}], timeout=10,
            metadata={providers.CTX_KEY: client._ctx, providers.SAMPLE_KEY: 0}, **{"no-log": True},
        )
    text = response.choices[0].message.content
    assert response.choices[0].finish_reason == finish and response.system_fingerprint == FINGERPRINT
    assert response.model == "frames-sim/judge"
    usage = (response.usage.prompt_tokens, response.usage.completion_tokens)
    assert usage == (math.ceil(len(prompt) / 4), math.ceil(len(text) / 4))
    cost = usage[0] * SIM_PRICE["input_cost_per_token"] + usage[1] * SIM_PRICE["output_cost_per_token"]
    assert response._hidden_params["response_cost"] == pytest.approx(cost)
    whole = '{"pass": true, "reason": "the answer matches the expected one"}'
    assert text == (whole[: len(whole) // 2] if truncated else whole)
