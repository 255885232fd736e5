"""evaluate(): samples, progress, rubric cases graded by the judge in one batch, and its argument checks."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import pytest

from frames_cli.evaluation.runner import evaluate
from frames_cli.executor.builtin import BuiltinExecutor
from frames_cli.executor.command import CommandExecutor
from frames_cli.formats.case_files import load_cases
from frames_cli.formats.skill_set import SkillSet
from frames_cli.llm.client.client import ModelClient

AGENT = [sys.executable, str(Path(__file__).resolve().parents[1] / "executor" / "agent.py")]
RUBRIC_CASE = """\
- id: rubric-1
  category: refund
  task:
    input: "My flight was delayed by one hour. Can I get compensation?"
    expected: "No compensation: the delay is shorter than three hours."
    check: rubric
  diagnosis:
    evidence: ["Offer compensation for delays only when the delay is longer than three hours."]
"""


def test_rubric_cases_go_to_the_judge_and_samples_are_ordered(sim_workspace, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    cases_dir = sim_workspace.workspace.cases_dir
    (cases_dir / "rubric.yaml").write_text(RUBRIC_CASE)
    cases = load_cases(sorted(cases_dir.glob("*.yaml")))
    answers = {"bags-1": "4", "refund-1": "yes", "rubric-1": "No compensation: the delay is shorter than three hours."}
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    monkeypatch.setenv("AGENT_ANSWERS", str(tmp_path / "answers.json"))
    seen: list[tuple[int, int]] = []
    skills = SkillSet.from_files({})
    with pytest.raises(ValueError, match="rubric checks need a judge"):
        evaluate(cases, skills, CommandExecutor(AGENT, timeout_s=20))
    with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False) as judge:
        report = evaluate(cases, skills, CommandExecutor(AGENT, timeout_s=20), samples=2, judge=judge,
                          progress=lambda d, t: seen.append((d, t)))
        judge_calls = judge.ledger.to_dict()["roles"]["judge"]["calls"]
    assert seen == [(4, 8), (8, 8)]
    assert judge_calls == 2  # one rubric case, two samples
    assert [(r.case_id, r.sample) for r in report.results][:4] == [("cancel-1", 0), ("cancel-1", 1), ("bags-1", 0),
                                                                   ("bags-1", 1)]
    verdicts = {r.case_id: r.passed for r in report.results}
    assert verdicts == {"bags-1": True, "cancel-1": False, "refund-1": False, "rubric-1": True}
    rubric = next(r for r in report.results if r.case_id == "rubric-1")
    assert rubric.usage.prompt_tokens > 100  # the agent's 100 plus the judge's prompt


def test_samples_must_be_positive() -> None:
    with pytest.raises(ValueError, match="samples must be at least 1"):
        evaluate([], SkillSet.from_files({}), CommandExecutor(AGENT, timeout_s=1), samples=0)


def test_objects_older_than_the_evaluation_are_frozen_only_while_it_runs(sim_workspace) -> None:
    cases = load_cases(sorted(sim_workspace.workspace.cases_dir.glob("*.yaml")))
    skills = SkillSet.from_files({})
    # The freeze is process-wide: start from a heap nothing (another test in this worker) froze.
    gc.unfreeze()
    frozen_during: list[int] = []
    with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False) as client:
        evaluate(cases, skills, BuiltinExecutor(client, sim_workspace.config.executor), progress=lambda d,
                 t: frozen_during.append(gc.get_freeze_count()))
        assert frozen_during and min(frozen_during) > 0
        assert gc.get_freeze_count() == 0
        # A caller that froze the heap itself (as litellm's import does) keeps it frozen, and
        # what was made since is frozen by the evaluation too.
        gc.freeze()
        try:
            later = [[i] for i in range(5000)]  # lists: always tracked by the collector
            frozen_before = gc.get_freeze_count()
            evaluate(cases, skills, BuiltinExecutor(client, sim_workspace.config.executor))
            # Frozen objects still die by reference counting, so the count may shrink a little;
            # what must not happen is evaluate unfreezing the caller's heap, or leaving `later` out.
            assert gc.get_freeze_count() >= frozen_before + len(later) - 100
        finally:
            gc.unfreeze()


def test_first_sample_numbers_the_draws_and_the_lost_retries_from_there() -> None:
    """The sequential gate draws samples k, k + 1, … later: the executor sees those numbers (the cache key's)."""
    from frames_cli.executor.base import AgentResult
    from frames_cli.formats.case import Case, Check, Source, Task
    from frames_cli.llm.messages.types import Usage

    seen: list[tuple[int, int]] = []

    class Numbered:
        def run(self, cases, skills, sample=0, retry=0):
            seen.append((sample, retry))
            gone = sample == 6 and retry == 0
            return [AgentResult(c.id, None if gone else "yes", [], Usage(1, 1), [], "timeout" if gone else None, gone)
                    for c in cases]

    case = Case("a", "c", Source("manual"), "", Task({"text": "a", "fields": {}}, "yes", Check("exact")))
    report = evaluate([case], SkillSet.from_files({}), Numbered(), samples=2, first_sample=5, lost_retries=1)
    assert [r.sample for r in report.results] == [5, 6]
    assert seen == [(5, 0), (6, 0), (6, 1)] and not any(r.lost for r in report.results)
    with pytest.raises(ValueError, match="first_sample"):
        evaluate([case], SkillSet.from_files({}), Numbered(), first_sample=-1)
