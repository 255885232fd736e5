"""Trace files as the tools that write them publish them: JSON arrays, Anthropic content blocks,
SWE-agent steps, τ-bench reference actions, Claude Code session headers; and deduplication that keeps
a failure's trajectory. Each test holds the smallest trace that showed one defect."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.formats.case_files import load_cases
from frames_cli.ingest.feedback.trace import TraceConverter, steps_from_messages

runner = CliRunner()

ANTHROPIC = [
    {"role": "user", "content": "Delete /tmp/x"},
    {"role": "assistant", "content": [{"type": "text", "text": "Deleting."},
                                      {"type": "tool_use", "id": "toolu_1", "name": "bash",
                                       "input": {"command": "rm -rf /tmp/x"}}]},
    {"role": "user",
     "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "permission denied", "is_error": True}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_anthropic_tool_use_and_tool_result_are_a_step_with_its_result():
    steps, customer, answer = steps_from_messages(ANTHROPIC)
    assert steps[0]["action"] == {"tool": "bash", "arguments": {"command": "rm -rf /tmp/x"}}
    assert steps[0]["result"] == "error: permission denied"
    assert steps[-1]["action"] == {"answer": "Done."} and answer == "Done."
    assert customer == "Delete /tmp/x"  # the tool_result turn is not the customer speaking


def test_anthropic_failure_keeps_the_failing_step(tmp_path: Path):
    path = _write(tmp_path, "t.jsonl",
                  json.dumps({"messages": ANTHROPIC, "outcome": "failure", "expected": "refuse"}) + "\n")
    case = TraceConverter(path, delayed=1).convert()[0]
    assert [s["action"] for s in case.diagnosis.trajectory][:1] == [{"tool": "bash",
                                                                     "arguments": {"command": "rm -rf /tmp/x"}}]
    assert case.diagnosis.trajectory[0]["result"] == "error: permission denied"


def test_a_json_array_file_is_read_item_by_item_with_lines(tmp_path: Path):
    items = [{"id": "a", "input": "Q1", "outcome": "success", "output": "A1",
              "steps": [{"state": "Q1", "action": {"answer": "A1"}}]},
             {"id": "b", "input": "Q2", "outcome": "success", "output": "A2",
              "steps": [{"state": "Q2", "action": {"answer": "A2"}}]}]
    path = _write(tmp_path, "t.json", json.dumps(items, indent=1))
    converter = TraceConverter(path)
    cases = converter.convert()
    assert [c.task.expected for c in cases] == ["A1", "A2"] and converter.problems == []
    assert [r.location.line for r in converter.account.rows] == [2, 16]


def test_swe_agent_observation_is_the_step_result(tmp_path: Path):
    traj = {"trajectory": [{"action": "ls", "observation": "setup.py", "thought": "look"},
                           {"action": "submit", "observation": "Error: tests failed", "thought": "done"}],
            "input": "Fix the bug", "outcome": "fail", "expected": "tests pass"}
    path = _write(tmp_path, "run.traj", json.dumps(traj, indent=2))
    case = TraceConverter(path, delayed=1).convert()[0]
    assert [s["result"] for s in case.diagnosis.trajectory] == ["Error: tests failed"]


def test_tau_bench_reference_actions_make_a_set_checked_case(tmp_path: Path):
    item = {"task_id": 3, "reward": 0.0,
            "info": {"task": {"actions": [{"name": "cancel_reservation", "kwargs": {"reservation_id": "ABC123"}}]}},
            "traj": [{"role": "system", "content": "policy"}, {"role": "user", "content": "Cancel my trip."},
                     {"role": "assistant", "content": "Which reservation?"},
                     {"role": "user", "content": "ABC123, yes please."},
                     {"role": "assistant", "content": "Done."}]}
    path = _write(tmp_path, "tau.json", json.dumps([item]))
    case = TraceConverter(path, {"expected": "info.task.actions"}).convert()[0]
    assert case.task.expected == {"actions": [{"name": "cancel_reservation",
                                               "arguments": {"reservation_id": "ABC123"}}]}
    assert case.task.check.kind == "set" and case.task.check.options == {"field": "actions"}
    assert case.task.input["text"] == "Cancel my trip.\n\nABC123, yes please."  # every customer turn
    assert case.task.answer_format.startswith('A JSON object {"actions"')  # else no agent knows to answer with actions


def test_tau_bench_no_write_action_is_a_case_expecting_no_action(tmp_path: Path):
    """Issue 29 item 8: `actions: []` (refuse or only inform) is the answer, not a missing one."""
    lookup = {"role": "assistant",
              "tool_calls": [{"id": "c", "function": {"name": "get_reservation_details",
                                                      "arguments": '{"reservation_id": "ABC123"}'}}]}
    traj = [{"role": "user", "content": "Cancel my basic economy trip ABC123."}, lookup,
            {"role": "tool", "tool_call_id": "c", "content": '{"cabin": "basic_economy"}'},
            {"role": "assistant", "content": "Basic economy cannot be cancelled."}]
    items = [{"task_id": 1, "reward": 1.0, "info": {"task": {"actions": []}}, "traj": traj},
             {"task_id": 2, "reward": 0.0, "info": {"task": {"actions": []}},
              "traj": [*traj[:3], {"role": "assistant", "content": "Cancelled."}]}]
    path = _write(tmp_path, "tau.json", json.dumps(items))
    converter = TraceConverter(path, {"expected": "info.task.actions"})
    cases = converter.convert()
    assert [c.task.expected for c in cases] == [{"actions": []}, {"actions": []}]
    assert all(c.task.check.kind == "set" and c.task.check.options == {"field": "actions"} for c in cases)
    assert [r.fate for r in converter.account.rows] == ["passing case", "case"] and converter.problems == []
    from frames_cli.evaluation.checks import SetCheck
    assert SetCheck().check(cases[1], {"actions": []}).passed
    assert not SetCheck().check(cases[1], {"actions": [{"name": "cancel_reservation",
                                                        "arguments": {"reservation_id": "ABC123"}}]}).passed


def test_default_mapping_on_a_tool_using_success_names_the_field_to_map(tmp_path: Path):
    messages = [{"role": "user", "content": "Bags on 4WQ150?"},
                {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "get", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c", "content": "2 bags"},
                {"role": "assistant", "content": "You have 2 bags."}]
    path = _write(tmp_path, "t.jsonl", json.dumps({"messages": messages, "reward": 1}) + "\n")
    converter = TraceConverter(path)
    assert converter.convert() == []
    assert "--map expected=KEY" in converter.problems[0].message
    assert converter.account.rows[0].fate == "skipped"


def test_failing_trajectory_survives_dedup_with_an_earlier_passing_trial(workspace: Path):
    passed = {"id": "t1", "input": "Cancel ABC123", "outcome": "success", "expected": "refuse",
              "steps": [{"state": "s", "action": {"answer": "refuse"}}]}
    failed = {"id": "t1", "input": "Cancel ABC123", "outcome": "failure", "expected": "refuse",
              "steps": [{"state": "s", "action": {"tool": "cancel_reservation",
                                                  "arguments": {"reservation_id": "ABC123"}}, "result": "ok"}]}
    path = _write(workspace, "t.jsonl", json.dumps(passed) + "\n" + json.dumps(failed) + "\n")
    result = runner.invoke(app, ["ingest", "trace", str(path), "--repo", str(workspace)])
    assert result.exit_code == 0, result.output
    [case] = load_cases([workspace / "cases" / "trace-t.yaml"])
    assert case.diagnosis.trajectory and case.diagnosis.trajectory[0]["action"]["tool"] == "cancel_reservation"
    assert case.diagnosis.symptom.startswith("failed at step 1")
    assert "t.jsonl:2 [t1]: duplicate" in result.stdout


def test_claude_code_message_id_is_not_read_as_messages(tmp_path: Path):
    line = {"type": "file-history-snapshot", "messageId": "5a1c", "snapshot": {}}
    path = _write(tmp_path, "session.jsonl", json.dumps(line) + "\n")
    converter = TraceConverter(path)
    assert converter.convert() == []
    assert not any("messageId" in p.message and "messages" in p.message for p in converter.problems
                   if p.severity == "warning")
    assert "neither `steps` nor `messages`" in converter.problems[0].message


def _session_lines(*extra: dict) -> str:
    """A Claude Code session file: a summary event, the ANTHROPIC conversation as message events
    (the first with a messageId, as Claude Code writes), a sub-agent's side-chain message, `extra`."""
    events = [{"type": "summary", "summary": "Delete a folder", "leafUuid": "u4"}]
    for i, message in enumerate(ANTHROPIC):
        events.append({"type": message["role"], "uuid": f"u{i}", "sessionId": "s1", "message": message,
                       **({"messageId": "m0"} if i == 0 else {})})
    events.insert(3, {"type": "assistant", "uuid": "x", "sessionId": "s1", "isSidechain": True,
                      "message": {"role": "assistant", "content": [{"type": "text", "text": "sub-agent"}]}})
    return "".join(json.dumps(e) + "\n" for e in [*events, *extra])


def test_a_claude_code_session_is_one_trace_with_its_tool_steps(tmp_path: Path):
    label = {"type": "label", "sessionId": "s1", "outcome": "failure",
             "expected": "Say that /tmp/x could not be deleted."}
    path = _write(tmp_path, "session.jsonl", _session_lines(label))
    converter = TraceConverter(path)
    (case,) = converter.convert()
    assert case.task.input["text"] == "Delete /tmp/x" and case.task.expected == "Say that /tmp/x could not be deleted."
    steps = case.diagnosis.trajectory
    assert steps[-1]["action"] == {"answer": "Done."}
    assert case.diagnosis.symptom == "failed at step 2; agent answered 'Done.'"
    messages = [p.message for p in converter.problems]
    assert "`summary` event of a Claude Code session file, not a message: left out" in messages
    assert "lines 2-7 read as Claude Code session 's1': 4 message(s); left out: 1 side-chain message" in messages
    assert all(p.severity == "warning" for p in converter.problems)
    assert [(r.location.line, r.fate) for r in converter.account.rows] == [(2, "case")]


def test_an_unlabelled_claude_code_session_is_one_skipped_trace_that_says_why(tmp_path: Path):
    converter = TraceConverter(_write(tmp_path, "session.jsonl", _session_lines()))
    assert converter.convert() == []
    (row,) = converter.account.rows
    assert row.fate == "skipped" and "no outcome" in row.reason
