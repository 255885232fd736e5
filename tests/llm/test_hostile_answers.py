"""Answers no model should give are failed calls, never a traceback or a stall (issue 29).

Invariants:
1. A spool answer that is not UTF-8, or larger than MAX_ANSWER_BYTES, is a failed call.
2. A reply nested 100,000 deep or a storm of brackets is refused in one linear pass, with a message.
3. An answer over the schema's text bound is a failed call.
"""

from __future__ import annotations

import threading
import time

import pytest

from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.llm.messages.schemas import REWRITE
from frames_cli.llm.transport.spool import MAX_ANSWER_BYTES
from frames_cli.llm.messages.structured import AnswerError, extract_json


def answer_with(folder, data: bytes, stop: threading.Event) -> None:
    while not stop.is_set():
        for request in folder.glob("*.request.json") if folder.exists() else []:
            answer = request.with_name(request.name.replace(".request.json", ".answer.txt"))
            if not answer.exists():
                answer.with_suffix(".tmp").write_bytes(data)
                answer.with_suffix(".tmp").rename(answer)
        time.sleep(0.005)


@pytest.mark.parametrize(("data", "fragment"), [
    (b'{"body": "caf\xe9"}', "not UTF-8"),
    (b'{"body": "' + b"x" * (MAX_ANSWER_BYTES + 10) + b'"}', "bytes"),
    (b"[" * 100_000 + b"]" * 100_000, "nested more than"),
    (b'{"body": "' + b"y" * 900_000 + b'"}', "too long"),
])
def test_a_hostile_spool_answer_is_a_failed_call(sim_workspace, data: bytes, fragment: str) -> None:
    config = sim_workspace.configured(models={"rewriter": "spool/person"}, spool={"timeout_s": 10.0, "poll_s": 0.01},
                                      llm={"repair_turns": 0})
    folder = sim_workspace.workspace.root / config.spool.dir
    stop = threading.Event()
    person = threading.Thread(target=answer_with, args=(folder, data, stop))
    person.start()
    try:
        with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
            reply = client.chat(ChatRequest("rewriter", [{"role": "user", "content": "Rewrite it."}], schema=REWRITE))
    finally:
        stop.set()
        person.join()
    assert not reply.ok and fragment in reply.error


@pytest.mark.parametrize("text", ["[" * 100_000, "{" * 200_000, "[1," * 100_000 + "]" * 100_000])
def test_deep_or_stormy_json_is_refused(text: str) -> None:
    # Before, json's recursion raised RecursionError (a traceback) and every `[` was tried as a start.
    with pytest.raises(AnswerError, match="nested more than"):
        extract_json(text)


def test_a_lone_surrogate_escape_is_refused() -> None:
    # Issue 29: `"\ud800"` parsed into text no file can hold; writing it traced back.
    from frames_cli.llm.messages.structured import parse_answer

    with pytest.raises(AnswerError, match="lone surrogate"):
        parse_answer('{"body": "x \\ud800 y"}', REWRITE)
    assert parse_answer('{"body": "x \\ud83d\\ude00 y"}', REWRITE) == {"body": "x \U0001f600 y"}
