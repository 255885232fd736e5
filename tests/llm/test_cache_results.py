"""The answer cache never changes a result (issue 29).

Before, cache entries were stored redacted: an answer holding a credential-shaped string (a case
whose expected value is a token) passed once and failed on the next, unchanged run, replayed as
`[REDACTED]`. Invariants:
1. An entry that redaction would change is not stored; the call is made again, with the same answer.
2. An entry an older frames stored redacted is not replayed.
3. Entries without credentials are cached as before.
"""

from __future__ import annotations

import json
from typing import Any

from helpers import install_scripted, remove_scripted

from frames_cli.llm.store.cache import ResponseCache
from frames_cli.llm.store.audit import Redactor
from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.llm.messages.schemas import EXECUTOR_STEP

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_an_entry_holding_a_credential_is_not_stored(tmp_path) -> None:
    cache = ResponseCache(tmp_path, Redactor({}))
    assert cache.put("ab" + "1" * 62, {"text": f"the token is {TOKEN}"}) is False
    assert cache.put("ab" + "2" * 62, {"text": "fine"}) is True
    cache.flush()
    lines = (tmp_path / "ab.jsonl").read_text().splitlines()
    assert len(lines) == 1 and TOKEN not in lines[0]
    (tmp_path / "cd.jsonl").write_text(json.dumps({"key": "cd" + "3" * 62, "text": "the token is [REDACTED]"}) + "\n")
    assert ResponseCache(tmp_path, Redactor({})).get("cd" + "3" * 62) is None


def test_an_answer_holding_a_token_is_the_same_on_the_second_run(sim_workspace) -> None:
    from litellm.llms.custom_llm import CustomLLM

    from frames_cli.llm.transport.providers import make_response

    calls: list[int] = []

    class Handler(CustomLLM):
        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            return make_response(f"scripted/{model}", json.dumps({"answer": TOKEN, "skills_used": []}), "stop", 50, 5)

    install_scripted(Handler())
    try:
        config = sim_workspace.configured(models={"executor": "scripted/agent"})
        request = ChatRequest("executor", [{"role": "user", "content": "What is the token?"}], schema=EXECUTOR_STEP)
        answers = []
        for _ in range(2):
            with ModelClient(sim_workspace.workspace, config) as client:
                answers.append(client.chat(request).data)
        with ModelClient(sim_workspace.workspace, config) as client:
            plain = client.chat(ChatRequest("executor", [{"role": "user", "content": "Anything else?"}],
                                            schema=EXECUTOR_STEP))
    finally:
        remove_scripted()
    assert answers == [{"answer": TOKEN, "skills_used": []}] * 2 and len(calls) == 3 and not plain.cached
