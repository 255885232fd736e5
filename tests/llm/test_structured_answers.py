"""JSON extraction, schema validation and the bounded repair turn (through the simulator)."""

from __future__ import annotations

import pytest

from frames_cli.llm.store.audit import read_exchanges
from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.llm.messages.schemas import DIAGNOSIS, REWRITE
from frames_cli.llm.messages.structured import AnswerError, extract_json, parse_answer


def test_extract_json_from_plain_fenced_and_chatty_replies():
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('Sure!\n```json\n{"a": [1, 2]}\n```\nAnything else?') == {"a": [1, 2]}
    assert extract_json('Here you go: {"body": "x"} hope it helps') == {"body": "x"}


@pytest.mark.parametrize("text", ["no json here", "Here is my answer: {'body': 'x'", '{"body": "cut sho'])
def test_extract_json_refuses_malformed_and_truncated(text):
    with pytest.raises(AnswerError, match="no JSON object"):
        extract_json(text)


def test_schema_errors_name_the_path():
    with pytest.raises(AnswerError) as info:
        parse_answer('{"proposals": [{"skill": "x", "change": "y", "rules": [], "rationale": "z"}]}', DIAGNOSIS)
    assert info.value.errors == ["at proposals/0: 'case_ids' is a required property"]


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({"enum": [1]}, "true"),  # true is not 1 in JSON Schema, though it is in Python
        ({"type": "object", "properties": {"ok": {"const": 0}}}, '{"ok": false}'),
        ({"type": "object", "dependentRequired": {"a": ["b"]}}, '{"a": 1}'),  # draft 2019-09+, jsonschema's default
        ({"type": "array", "prefixItems": [{"type": "string"}]}, "[1]"),
        ({"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False}, '{"a": 1, "z": 2}'),
    ],
)
def test_answers_are_checked_with_jsonschemas_semantics(schema, text):
    with pytest.raises(AnswerError):
        parse_answer(text, schema)


def rewrite_request(i: int) -> ChatRequest:
    prompt = f'Blueprint:\n```json\n[]\n```\n\n<skill name="s{i}" target="true">\nRule {i}.\n</skill>'
    return ChatRequest("rewriter", [{"role": "user", "content": prompt}], schema=REWRITE, tag=f"r{i}")


def test_repair_turn_fails_when_the_model_stays_malformed(sim_workspace):
    config = sim_workspace.configured(faults={"malformed_json": 1.0})
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir) as client:
        reply = client.chat(rewrite_request(0))
    assert not reply.ok and reply.data is None and reply.attempts == 2
    assert reply.error.startswith("invalid answer after 1 repair turn(s)")
    log = read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")
    assert len(log) == 2 and "Your reply could not be used" in log[1]["messages"][-1]["content"]
    assert log[1]["messages"][-2] == {"role": "assistant", "content": log[0]["reply"]}
    assert not list(sim_workspace.workspace.cache_dir.glob("*.jsonl"))


def test_repair_turn_succeeds_for_some_and_usage_counts_both_turns(sim_workspace):
    config = sim_workspace.configured(faults={"malformed_json": 0.5, "truncated": 0.2})
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir) as client:
        replies = client.chat_many([rewrite_request(i) for i in range(30)])
    repaired = [r for r in replies if r.repaired]
    assert repaired and all(r.ok and r.attempts == 2 and r.data["body"] for r in repaired)
    log = read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")
    for reply in repaired:
        turns = [e for e in log if e["tag"] == reply.request.tag]
        assert reply.usage.prompt_tokens == sum(e["usage"]["prompt_tokens"] for e in turns)


def test_repair_turns_zero_means_no_second_call(sim_workspace):
    config = sim_workspace.configured(faults={"malformed_json": 1.0}, llm={"repair_turns": 0})
    with ModelClient(sim_workspace.workspace, config) as client:
        reply = client.chat(rewrite_request(0))
    assert not reply.ok and reply.attempts == 1
