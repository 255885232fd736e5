"""Run reports written into the run folder: JSON, Markdown and the JUnit XML of the gate for CI.

Invariants:
1. report.xml parses as JUnit: one test case per category; exactly the categories below the floor fail.
2. report.json and report.md show the front read from the saved state, with diff sizes from git.
3. All three files are written into `.frames/runs/<run-id>/`.
"""

from __future__ import annotations

import json

from junitparser import Failure, JUnitXml

from frames_cli.evolution.run.snapshot import run_snapshot
from frames_cli.evolution.state.records import Candidate, RunState
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.evolution.state.runs import save_state
from frames_cli.evolution.report.report import gate_junit_xml, write_run_reports
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.config import FramesConfig, with_overrides
from frames_cli.workspace.layout import Workspace

RUN = "20261129-120000-c0ffee"


def _check(category: str, baseline: float, child: float, eps: float = 0.05) -> dict:
    floor = (1 - eps) * baseline
    return {"category": category, "baseline": baseline, "child": child, "floor": floor, "passed": child >= floor}


def _state(git_repo) -> RunState:
    store = GitStore(git_repo.root)
    base = store.resolve("HEAD")
    good = store.commit_files(base, {"skills/alpha/SKILL.md": b"---\nname: alpha\n---\nAlpha body.\nOne rule.\n"},
                              "good")
    bad = store.commit_files(base, {"skills/beta/SKILL.md": None}, "bad")
    checks_good = [_check("cancel", 0.5, 0.75), _check("refund", 0.8, 0.8)]
    checks_bad = [_check("cancel", 0.5, 0.5), _check("refund", 0.8, 0.6)]
    return RunState(
        RUN,
        base,
        status="finished",
        round=1,
        candidates=[
            Candidate(BASE_ID, base, None, 0, 0.65, {"cancel": 0.5, "refund": 0.8}, 200.0, None),
            Candidate("r1c1", good, BASE_ID, 1, 0.775, {"cancel": 0.75, "refund": 0.8}, 210.0, 0.02, gate_passed=True,
                      gate_details={"passed": True, "tolerance": 0.05, "checks": checks_good},
                      changed_skills=["alpha"]),
            Candidate("r1c2", bad, BASE_ID, 1, 0.55, {"cancel": 0.5, "refund": 0.6}, 150.0, 0.01, gate_passed=False,
                      gate_details={"passed": False, "tolerance": 0.05, "checks": checks_bad}, changed_skills=["beta"]),
        ],
        front=[BASE_ID, "r1c1"],
        spend_tokens=4321,
        spend_usd=0.03,
        stop_reason="max_rounds",
        config=run_snapshot(with_overrides(FramesConfig(), "evolution", recommend_alpha=1.0)),
    )


def _cases(xml: str, tmp_path) -> dict[str, list]:
    path = tmp_path / "gate.xml"
    path.write_text(xml)
    suites = list(JUnitXml.fromfile(str(path)))
    assert len(suites) == 1
    return {case.name: [r for r in case.result if isinstance(r, Failure)] for case in suites[0]}


def test_junit_fails_exactly_the_regressed_categories(git_repo, tmp_path):
    state = _state(git_repo)
    passing = _cases(gate_junit_xml(state), tmp_path)
    assert passing == {"cancel": [], "refund": []}
    failing = _cases(gate_junit_xml(state, state.candidate("r1c2")), tmp_path)
    assert list(failing) == ["cancel", "refund"] and failing["cancel"] == []
    assert "refund below the gate floor: S0 80.0%, candidate 60.0%, floor 76.0%" in failing["refund"][0].message
    assert _cases(gate_junit_xml(state, state.candidate(BASE_ID)), tmp_path) == {}


def test_write_run_reports(git_repo):
    ws = Workspace(git_repo.root)
    state = _state(git_repo)
    save_state(ws, state)
    paths = write_run_reports(ws, GitStore(git_repo.root), state)
    folder = ws.runs_dir / RUN
    assert {p.name for p in folder.iterdir()} == {"state.json", "report.json", "report.md", "report.xml",
                                                  "results.jsonl"}
    assert paths["junit"] == folder / "report.xml"
    report = json.loads(paths["json"].read_text())
    assert report["summary"]["best_id"] == "r1c1" and report["summary"]["spend_tokens"] == 4321
    assert [(r["id"], r["changed_skills"], r["diff_size"]) for r in report["menu"]["front"]] == [
        (BASE_ID, [], 0),
        ("r1c1", ["alpha"], 1),
    ]
    assert len(report["candidates"]) == 3
    md = paths["markdown"].read_text()
    assert "Status **finished** (max_rounds) after 1 round; base" in md and "2 child candidates" in md
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert table == [
        "|  | S0 | r1c1 ★ |",
        "|---|---|---|",
        "| pass rate | 65.0% | 77.5% |",
        "| Δ vs S0 | +0.0 pt | +12.5 pt |",
        "|   cancel | 50.0% | 75.0% |",
        "|   refund | 80.0% | 80.0% |",
        "| tokens/case | 200 | 210 |",
        "| cost/eval | — | $0.0200 |",
        "| skills changed | 0 | 1 |",
        "| diff lines | 0 | 1 |",
    ]
    assert "- r1c1: alpha" in md and "S0 is r0c0, the base commit" in md and ", and is on the front." in md
    assert "- r1c2: failed the gate: refund 60.0% \\< floor 76.0%" in md
    assert f"frames review {RUN}/r1c1" in md
