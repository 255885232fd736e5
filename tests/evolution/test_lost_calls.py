"""Lost answers in the evolution loop, and reports rebuilt from state (issue #15 g).

Invariants:
1. A case lost on either side is compared on neither: the gate judges the child on the cases both
   sides answered, and the verdict names the cases left out.
2. A lost result is no failure to diagnose, and no rate counts it.
3. A finished run with lost results is not "up to date": the next `frames evolve` starts a new run.
4. A finished run without its reports (killed after its last checkpoint) gets them and its review
   branch rebuilt, byte for byte, by the next `frames evolve`.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from frames_cli.evolution.round.record import LoopMemory, RoundRecord
from frames_cli.evolution.compare.gate import PerCategoryGate
from frames_cli.evolution.round.context import Evaluation
from frames_cli.evolution.run.loop import EvolutionRun
from frames_cli.evolution.run.snapshot import run_snapshot
from frames_cli.evolution.state.records import RunState
from frames_cli.evolution.state.settings import Settings
from frames_cli.evolution.compare.scoring import score
from frames_cli.formats.case_record import case_from_dict
from frames_cli.workspace.config import FramesConfig, with_overrides

from helpers.airline import build_repo, one_round_config, run_cli


def record(cid: str, passed: bool, lost: bool = False) -> dict:
    return {"case_id": cid, "category": "c", "sample": 0, "passed": passed, "reason": "", "output": None,
            "skills_used": [],
            "trajectory": [], "tokens": 10, "lost": lost}


def evaluation(results: list[dict]) -> Evaluation:
    return Evaluation(0.0, {}, 10.0, None, results)


def gated_run(tmp_path: Path, base: list[dict], child: list[dict]) -> tuple[EvolutionRun, RoundRecord]:
    ids = sorted({r["case_id"] for r in base})
    cases = {cid: case_from_dict({"id": cid, "category": "c", "task": {"input": {"text": "q"}, "expected": "yes",
                                                                       "check": {"kind": "exact"}}}) for cid in ids}
    evals = tmp_path / "evals"
    evals.mkdir()
    for cid, results in (("r0c0", base), ("r1c1", child)):
        (evals / f"{cid}.json").write_text(json.dumps(evaluation(results).to_json()))
    ctx = SimpleNamespace(gate=PerCategoryGate(0.05), sequential=None, cases=cases, evals_dir=evals, store=None,
                          on_event=lambda _m: None)
    memory = LoopMemory(eval_case_ids=ids)
    settings = Settings.from_config(FramesConfig())
    run = EvolutionRun(ctx, RunState(run_id="20261201-000000-abcdef", base="0" * 40), memory, settings, {})  # type: ignore[arg-type]
    return run, RoundRecord(round=1, parent="r0c0", child="r1c1")


def test_a_case_lost_on_either_side_is_compared_on_neither(tmp_path: Path) -> None:
    base = [record("a1", True), record("a2", True, lost=True), record("a3", True), record("a4", True)]
    # a1 lost in the child; a2 lost in S0 and failed by the child: neither says anything of the child.
    child = [record("a1", False, lost=True), record("a2", False), record("a3", True), record("a4", True)]
    run, r = gated_run(tmp_path, base, child)

    run.gate(r)

    assert r.gate is not None and r.gate.verdict.passed and r.gate.lost_left_out == ("a1", "a2")
    (check,) = r.gate.verdict.checks
    assert (check.baseline, check.child, check.n) == (1.0, 1.0, 2)


def test_a_real_failure_beside_a_lost_case_still_rejects(tmp_path: Path) -> None:
    base = [record(f"a{i}", True) for i in range(1, 5)]
    child = [record("a1", False, lost=True), record("a2", False), record("a3", True), record("a4", True)]
    run, r = gated_run(tmp_path, base, child)

    run.gate(r)

    assert r.gate is not None and not r.gate.verdict.passed and r.gate.lost_left_out == ("a1",)


def test_lost_results_are_no_failures_and_count_in_no_rate() -> None:
    ev = evaluation([record("a1", False, lost=True), record("a2", False), record("a3", True)])
    assert list(ev.failing()) == ["a2"]
    scores = score(ev.results, ["a1", "a2", "a3"])
    assert (scores.pass_rate, scores.cases, scores.lost) == (0.5, 2, 1)
    assert score(ev.results, ["a1"]).pass_rate is None


def test_a_run_with_lost_results_is_not_up_to_date(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws", one_round_config())
    first = json.loads(run_cli(repo, "--json").stdout)
    path = repo.root / ".frames" / "runs" / first["run_id"] / "state.json"
    state = json.loads(path.read_text())
    state["candidates"][0]["lost"] = 2
    path.write_text(json.dumps(state))

    again = run_cli(repo)

    assert again.exit_code == 0, again.output
    assert f"run {first['run_id']} lost 2 result(s) to the model layer; starting a new run to ask again" in again.output
    runs = sorted(p.name for p in (repo.root / ".frames" / "runs").iterdir())
    assert len(runs) == 2


def test_the_run_report_says_how_many_results_were_lost(tmp_path: Path) -> None:
    from frames_cli.evolution.state.records import Candidate
    from frames_cli.evolution.report.report import run_report_json, run_report_markdown

    config = run_snapshot(with_overrides(FramesConfig(), "evolution", recommend_alpha=1.0))
    state = RunState(run_id="20261201-000000-abcdef", base="0" * 40, status="finished", config=config)
    state.candidates.append(Candidate("r0c0", "0" * 40, None, 0, pass_rate=0.5, lost=3, sets={"test": {"lost": 1}}))
    state.front = ["r0c0"]
    assert state.lost_results() == 4
    assert "Lost: 4 results (case × sample) got no answer from the model layer" in run_report_markdown(state, [])
    assert run_report_json(state, [])["lost_results"] == 4


def test_a_lost_case_never_makes_an_early_rejection() -> None:
    from frames_cli.evaluation.runner import CaseResult
    from frames_cli.evolution.compare.early import rejection_rule
    from frames_cli.evolution.compare.verdict import CaseOutcome

    baseline = {f"a{i}": CaseOutcome("c", (True,)) for i in range(1, 5)}
    rule = rejection_rule(PerCategoryGate(0.05), baseline, set())
    lost = CaseResult("a1", "c", 0, False, "answer lost: model: gave up", error="model: gave up", lost=True)
    # Counted as a failure, a1 alone would put the category at 3/4 < 0.95 whatever a2..a4 give.
    assert rule([lost], ["a2", "a3", "a4"]) is None
    failed = CaseResult("a2", "c", 0, False, "wrong")
    assert rule([lost, failed], ["a3", "a4"]) is not None


def test_a_run_killed_before_its_reports_gets_them_rebuilt_from_state(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "ws", one_round_config())
    first = json.loads(run_cli(repo, "--json").stdout)
    folder = repo.root / ".frames" / "runs" / first["run_id"]
    written = {name: (folder / name).read_bytes() for name in ("report.json", "report.md", "report.xml")}
    branch = first["branch"]
    # What a kill after the final checkpoint leaves: a finished state, no reports, no review branch.
    for name in written:
        (folder / name).unlink()
    state = json.loads((folder / "state.json").read_text())
    state["branch"] = None
    (folder / "state.json").write_text(json.dumps(state))
    if branch:
        repo.git("branch", "-D", branch)

    again = run_cli(repo)

    assert again.exit_code == 0, again.output
    assert (
        f"run {first['run_id']} ended without report.json, report.md, report.xml: rebuilt from its state"
        in again.output
    )
    assert "up to date" in again.output
    assert {name: (folder / name).read_bytes() for name in written} == written
    if branch:
        assert repo.git("rev-parse", branch) == repo.git("rev-parse", f"refs/heads/{branch}")
        assert json.loads((folder / "state.json").read_text())["branch"] == branch
    assert len(list((repo.root / ".frames" / "runs").iterdir())) == 1
