"""A batch line's key: sample k of a request is its own draw, as in the model cache (llm/transport/batch.call_key)."""

from __future__ import annotations

from frames_cli.llm.transport import providers
from frames_cli.llm.transport.batch import call_key


def _kwargs(sample: int, attempt: int = 0) -> dict:
    return {"model": "openai/gpt-x", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0,
            "metadata": {providers.ATTEMPT_KEY: attempt, providers.SAMPLE_KEY: sample}}


def test_samples_and_attempts_of_one_request_are_different_calls():
    assert call_key(_kwargs(0)) != call_key(_kwargs(40))  # a fresh sample is never sample 0's answer
    assert call_key(_kwargs(0)) != call_key(_kwargs(0, attempt=1))
    assert call_key(_kwargs(3)) == call_key(_kwargs(3))
