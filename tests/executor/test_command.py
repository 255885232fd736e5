"""The command agent: protocol, blindness, and failure modes (crash, timeout, bad JSON) that fail one case,
not the run."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from frames_cli.evaluation.runner import evaluate
from frames_cli.executor.command import CommandExecutor, parse_agent_output
from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task
from frames_cli.formats.skill_set import SkillSet

AGENT = [sys.executable, str(Path(__file__).with_name("agent.py"))]
MARKER = "ZZ-DIAGNOSIS-MARKER-7f3a"


def make_case(case_id: str, expected: object = "yes", category: str = "cat", kind: str = "exact") -> Case:
    return Case(
        id=case_id, category=category, source=Source("manual"), created="",
        task=Task({"text": f"question {case_id}", "fields": {"n": 1}}, expected, Check(kind), "yes or no"),
        diagnosis=Diagnosis(symptom=f"{MARKER} symptom", cause=f"{MARKER} cause", notes=MARKER,
                            trajectory=[{"state": MARKER}], evidence=[f"Rule {MARKER}."]),
    )


def skill_set(*names: str) -> SkillSet:
    return SkillSet.from_files(
        {f"skills/{n}/SKILL.md": f"---\nname: {n}\ndescription: Does {n}.\n---\nBody of {n}.\n".encode() for n in names}
    )


@pytest.fixture
def agent_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "log"
    log.mkdir()
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"ok-1": "yes", "ok-2": "no"}))
    monkeypatch.setenv("AGENT_LOG", str(log))
    monkeypatch.setenv("AGENT_ANSWERS", str(answers))
    return log


def test_agent_gets_case_and_skills_and_never_the_diagnosis(agent_env: Path) -> None:
    cases = [make_case("ok-1"), make_case("ok-2")]
    report = evaluate(cases, skill_set("alpha", "beta"), CommandExecutor(AGENT, timeout_s=20), samples=2)
    assert [(r.case_id, r.sample, r.passed) for r in report.results] == [
        ("ok-1", 0, True),
        ("ok-1", 1, True),
        ("ok-2", 0, False),
        ("ok-2", 1, False),
    ]
    assert report.results[0].skills_used == ["alpha", "beta"]
    assert report.results[0].usage.prompt_tokens == 100 and report.results[0].trajectory == [
        {"step": 1, "action": "answer"}
    ]
    records = sorted(agent_env.glob("*.json"))
    assert len(records) == 4
    for path in records:
        text = path.read_text()
        assert MARKER not in text and '"expected"' not in text
        record = json.loads(text)
        assert set(record["stdin"]) == {"id", "input", "answer_format", "sample"}
        assert record["skills"] == ["alpha", "beta"]
        assert record["argv"] == [record["env_skills_dir"]]


def test_crash_timeout_and_bad_json_fail_only_their_case(agent_env: Path) -> None:
    cases = [make_case("crash-1"), make_case("slow-1"), make_case("garbage-1"), make_case("badfield-1"),
             make_case("ok-1")]
    start = time.monotonic()
    report = evaluate(cases, skill_set("alpha"), CommandExecutor(AGENT, timeout_s=1.5, concurrency=5))
    assert time.monotonic() - start < 15
    by_id = {r.case_id: r for r in report.results}
    assert by_id["crash-1"].error == "agent exited with code 3: agent blew up: KeyError 'fields'"
    assert by_id["slow-1"].error == "agent timed out after 1.5 s"
    assert by_id["garbage-1"].error.startswith("agent printed no JSON object with an `output` key: Sure! Here is my "
                                               "answer")
    assert by_id["badfield-1"].error == "agent's `skills_used` is not a list of strings"
    assert all(not by_id[c].passed and by_id[c].reason.startswith("agent failed: ")
               for c in ("crash-1", "slow-1", "garbage-1", "badfield-1"))
    assert by_id["ok-1"].passed and by_id["ok-1"].error is None


def test_missing_program_is_a_failed_case(tmp_path: Path) -> None:
    result = CommandExecutor([str(tmp_path / "no-such-agent")], timeout_s=5).run(
        [make_case("x").agent_view()], skill_set("alpha")
    )[0]
    assert result.error is not None and result.error.startswith("cannot start")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "agent printed no JSON object with an `output` key: (nothing)"),
        ('{"answer": 1}', "agent printed no JSON object with an `output` key: {\"answer\": 1}"),
        ('{"output": 1, "usage": {"prompt_tokens": "many"}}', "agent's `usage` holds non-numeric token counts"),
        ('{"output": 1, "trajectory": {}}', "agent's `usage` must be an object and `trajectory` a list"),
    ],
)
def test_parse_agent_output_errors(text: str, error: str) -> None:
    assert parse_agent_output("c", text).error == error


def test_parse_agent_output_accepts_pretty_printed_json() -> None:
    result = parse_agent_output("c",
                                json.dumps({"output": {"actions": []},
                                            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "cost_usd": 0.01}},
                                            indent=2))
    assert result.error is None and result.output == {"actions": []} and result.usage.cost_usd == 0.01
