"""Lost answers are not failed cases (issue #15 g).

Invariants:
1. The model layer marks a reply lost when retriable errors outlast the retries or the answer stays
   malformed after the repair turns; a retry round numbers its attempts after the earlier rounds'.
2. `evaluate` runs a lost case again up to `lost_retries` times; one answered on a retry is an
   ordinary result (its lost tries' tokens kept); one never answered stays `lost`.
3. A lost result counts in no rate, no failure list and no token mean; the report says how many.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from frames_cli.evaluation import report as reports
from frames_cli.evaluation.runner import evaluate
from frames_cli.executor.builtin import BuiltinExecutor
from frames_cli.executor.command import CommandExecutor
from frames_cli.formats.case_record import case_from_dict
from frames_cli.formats.skill_set import SkillSet
from frames_cli.llm.store.audit import read_exchanges
from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.llm.messages.schemas import EXECUTOR_STEP

AGENT = [sys.executable, str(Path(__file__).resolve().parents[1] / "executor" / "agent.py")]


def case(cid: str, category: str = "c", expected: str = "yes"):
    return case_from_dict({"id": cid, "category": category, "task": {"input": {"text": f"question {cid}"},
                                                                     "expected": expected, "check": {"kind": "exact"}}})


def request(retry: int = 0) -> ChatRequest:
    return ChatRequest("executor", [{"role": "user", "content": "case bags-1: how many bags? Answer as JSON."}],
                       EXECUTOR_STEP, tag="bags-1", retry=retry)


@pytest.mark.parametrize("faults", [{"rate_limit": 1.0}, {"timeout": 1.0}, {"malformed_json": 1.0}, {"truncated": 1.0}])
def test_the_model_layer_marks_a_reply_lost(sim_workspace, faults) -> None:
    config = sim_workspace.configured(faults=faults, llm={"max_retries": 1})
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        reply = client.chat(request())
    assert not reply.ok and reply.lost


def test_a_retry_round_asks_with_fresh_attempt_numbers(sim_workspace) -> None:
    config = sim_workspace.configured(faults={"rate_limit": 1.0}, llm={"max_retries": 2})
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir, use_cache=False) as client:
        client.chat(request())
        client.chat(request(retry=2))
    assert [e["attempt"] for e in read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")] == [0, 1, 2, 6, 7, 8]


def test_a_lost_case_is_run_again_and_then_scored_as_answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "answers.json").write_text(json.dumps({"lost-1": "yes", "ok-1": "yes", "wrong-1": "no"}))
    monkeypatch.setenv("AGENT_ANSWERS", str(tmp_path / "answers.json"))
    monkeypatch.setenv("AGENT_LOST_UNTIL", "2")
    cases = [case("lost-1"), case("ok-1"), case("wrong-1")]
    executor = CommandExecutor(AGENT, timeout_s=20)

    still_lost = evaluate(cases, SkillSet.from_files({}), executor, lost_retries=1)
    answered = evaluate(cases, SkillSet.from_files({}), executor, lost_retries=2)

    lost = {r.case_id: r.lost for r in still_lost.results}
    assert lost == {"lost-1": True, "ok-1": False, "wrong-1": False}
    assert still_lost.results[0].reason.startswith("answer lost: agent exited with code 75")
    assert [r.case_id for r in still_lost.failures()] == ["wrong-1"]
    assert [r.case_id for r in still_lost.lost()] == ["lost-1"]
    overall = still_lost.overall()
    assert (overall.n_results, overall.passed, overall.pass_rate, overall.lost) == (2, 1, 0.5, 1)
    assert still_lost.mean_tokens == 107  # the two answered results' 100 + 7 tokens each
    assert still_lost.to_json()["lost"] == 1
    assert "lost: 1 result(s)" in reports.markdown(still_lost)

    by_case = {r.case_id: r for r in answered.results}
    assert not by_case["lost-1"].lost and by_case["lost-1"].passed
    assert answered.pass_rate == pytest.approx(2 / 3) and answered.lost() == []


def test_an_agent_failure_is_not_lost(tmp_path: Path) -> None:
    report = evaluate([case("crash-1"), case("garbage-1")], SkillSet.from_files({}),
                      CommandExecutor(AGENT, timeout_s=20), lost_retries=2)
    assert [(r.lost, r.passed) for r in report.results] == [(False, False), (False, False)]
    assert len(report.failures()) == 2


def test_builtin_executor_results_lost_to_the_provider_are_retried(sim_workspace) -> None:
    cases = [case(f"q{i}") for i in range(12)]
    # Every call rate-limited: each case lost after the first pass and both retries.
    failing = sim_workspace.configured(faults={"rate_limit": 1.0}, llm={"max_retries": 0})
    with ModelClient(sim_workspace.workspace, failing, run_dir=sim_workspace.run_dir, use_cache=False) as client:
        report = evaluate(cases, SkillSet.from_files({}), BuiltinExecutor(client, failing.executor), lost_retries=2)
    assert all(r.lost for r in report.results) and report.overall().n_results == 0
    attempts = sorted({e["attempt"] for e in read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")})
    assert attempts == [0, 1, 2]  # max_retries 0: one attempt per round, three rounds
