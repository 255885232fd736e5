"""Agent traces → cases; the trajectory excerpt is the whole trace for delayed failures, the last step otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.words import policy_sentences
from frames_cli.ingest.feedback.trace import TraceConverter, excerpt, steps_from_messages

DATA = Path(__file__).parent / "data"
TRACES = DATA / "traces.jsonl"


@pytest.fixture(scope="module")
def converted():
    conv = TraceConverter(TRACES, policy=policy_sentences(DATA / "policies"))
    cases = conv.convert()
    return {c.source.ref.rsplit("(", 1)[-1].rstrip(")"): c for c in cases}, conv.problems


def test_bad_traces_are_reported_with_file_and_line_and_skipped(converted):
    cases, problems = converted
    assert sorted(cases) == ["tr-0412", "tr-0413", "tr-0415", "tr-0419"]
    errors = [(p.location.line, p.message) for p in problems if p.severity == "error"]
    assert [line for line, _ in errors] == [3, 5, 6, 7]
    assert "final reply reports what 2 tool call(s) returned" in errors[0][1] and "--map expected=KEY" in errors[0][1]
    assert "neither `steps` nor `messages`" in errors[1][1]
    assert errors[2][1].startswith("invalid JSON")
    assert "without `expected`" in errors[3][1] and "--map expected=KEY" in errors[3][1]
    assert all(str(p.location).startswith(f"{TRACES}:") for p in problems)
    warnings = sorted(p.message for p in problems if p.severity == "warning")
    assert [w.split(" ")[0] for w in warnings] == ["1", "column", "verdict"]  # Latin-1 byte, 'catgory', 'sucess'


def test_delayed_failure_keeps_the_whole_trajectory_and_names_the_cause(converted):
    case = converted[0]["tr-0412"]
    assert [s["step"] for s in case.diagnosis.trajectory] == [1, 2, 3, 4, 5]
    assert case.diagnosis.cause.startswith("step 2:") and "N06JO3" in case.diagnosis.cause
    assert case.task.input["text"].startswith("Hi, I'm mia_li_3668")
    assert case.task.expected == {"actions": []} and case.category == "cancel"
    assert case.diagnosis.evidence == ["Must confirm the reservation id with the user before any cancellation."]


def test_simple_failure_keeps_only_the_last_step(converted):
    case = converted[0]["tr-0413"]
    assert [s["step"] for s in case.diagnosis.trajectory] == [2]
    assert case.diagnosis.trajectory[0]["action"] == {"answer": "Done, one bag removed and refunded."}
    # The reviewer's words first; the policy sentence they paraphrase beside them.
    assert case.diagnosis.evidence == ["users can add but not remove checked bags",
                                       "The user can add but not remove checked bags."]


def test_openai_messages_success_and_failure(converted):
    # tr-0414 succeeded, but its final reply reports a tool result: skipped (see the bad-traces test)
    assert "tr-0414" not in converted[0]
    failed = converted[0]["tr-0415"]
    assert failed.task.check.kind == "rubric"
    assert failed.diagnosis.evidence == ["Basic economy flights cannot be modified."]
    assert [s["step"] for s in failed.diagnosis.trajectory] == [3]  # no error result, no named cause: simple


def test_latin1_and_misspelt_keys_still_import(converted):
    case = converted[0]["tr-0419"]
    assert case.task.input["text"].endswith("Merci, Zoë")
    assert case.category == "booking"


def test_steps_from_messages_pairs_tool_results_by_call_id():
    messages = [
        {"role": "user", "content": "cancel ABC"},
        {"role": "assistant", "tool_calls": [
            {"id": "a", "function": {"name": "get", "arguments": "{\"id\": \"ABC\"}"}},
            {"id": "b", "function": {"name": "log", "arguments": "not json"}},
        ]},
        {"role": "tool", "tool_call_id": "b", "content": "logged"},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "found"}]},
        {"role": "assistant", "content": "Cancelled."},
    ]
    steps, first, answer = steps_from_messages(messages)
    assert first == "cancel ABC" and answer == "Cancelled."
    assert [s["result"] for s in steps] == ["found", "logged", None]
    assert steps[0]["action"] == {"tool": "get", "arguments": {"id": "ABC"}}
    assert steps[1]["action"]["arguments"] == "not json"
    with pytest.raises(ValueError, match="message 1"):
        steps_from_messages(["hello"])


@pytest.mark.parametrize(("cause", "kept"), [(None, [4]), (4, [4]), (3, [4]), (2, [1, 2, 3, 4]), (1, [1, 2, 3, 4])])
def test_excerpt_threshold(cause, kept):
    steps = [{"state": i, "action": i, "result": i} for i in range(4)]
    assert [s["step"] for s in excerpt(steps, cause, delayed=2)] == kept
