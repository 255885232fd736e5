"""What a compliance reviewer reads: counts beside rates, reasons, the simulator notice, promote's
refusals and merge check, the deploy menu at 80 columns, and the small things (--version, flag help,
--markdown FILE, percentages, plurals, no trailing spaces). On the synthetic run of
test_front_review_promote_runs (real candidate commits, a saved RunState).

Invariants:
1. Every rate a person sees has its n beside it (and k when samples > 1) once the run recorded counts.
2. Every round without a child and every candidate off the front is given its reason in report.md.
3. A run that used the simulator says so in every output: front/review (terminal, Markdown, JSON), report.json.
4. promote refuses a candidate off the front or on a base no longer in the current branch's history,
   unless the matching option is given, and says whether merging would conflict.
5. The deploy menu at 80 columns: no line wider than 80 and no word broken.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import xml.etree.ElementTree as ET

from junitparser import JUnitXml
from rich.console import Console
from typer.testing import CliRunner
from helpers.review_world import PAPERS_RULE, RUN, SIM_MODELS, invoke, saved_with, three_rounds

from frames_cli.commands.app import app
from frames_cli.evolution.report.menu import MenuRow, print_menu
from frames_cli.evolution.state.records import Candidate, RunState
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.evolution.state.runs import load_run, save_state
from frames_cli.evolution.report.report import write_run_reports
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.layout import Workspace

#: The paper's rule (★ is the front member of the highest pass rate), with simulated models.
def _words(text: str) -> set[str]:
    return set(re.sub(r"[│┃┏┓┗┛┡┩┠┨━─┳┻╇╈┼┬┴└┘┌┐├┤╋]", " ", text).split())


# --- 1. n beside every rate -------------------------------------------------------------------------

def test_menu_review_and_report_show_n_beside_rates(world):
    saved_with(world)
    front = invoke(world, "front")
    assert "pass rate (n=8)" in front.stdout and "cancel (n=4)" in front.stdout
    md = invoke(world, "review", "r1c1", "--markdown", "-").stdout
    assert "| cancel (n=4) | 25.0% | 25.0% | 75.0% | 23.8% | pass |" in md
    assert "(S0 50.0%; n=8)" in md
    state = load_run(Workspace(world.root), RUN)
    report = write_run_reports(Workspace(world.root), GitStore(world.root), state)["markdown"].read_text()
    assert "| pass rate (n=8) |" in report and "|   refund (n=4) |" in report


def test_k_is_shown_when_cases_were_sampled_more_than_once(world):
    state = saved_with(world)
    state.candidates = [dataclasses.replace(c, samples=3) for c in state.candidates]
    save_state(Workspace(world.root), state)
    front = invoke(world, "front")
    assert "pass rate (n=8, k=3)" in front.stdout
    assert "E, the run's evaluation set (8 cases × 3 samples)" in " ".join(front.stdout.split())


def test_runs_and_status_show_n_beside_the_best_pass_rate(world):
    state = saved_with(world)
    table = [line.split() for line in invoke(world, "runs").stdout.splitlines()]
    assert ["(patience)", "(r2c1,", "n=8)"] in table
    assert json.loads(invoke(world, "runs", "--json").stdout)[-1]["n_cases"] == 8
    status = invoke(world, "status").stdout
    assert "best pass rate 87.5% (r2c1, n=8)" in status
    state.candidates = [dataclasses.replace(c, samples=3) for c in state.candidates]
    save_state(Workspace(world.root), state)
    assert "best pass rate 87.5% (r2c1, n=8, k=3)" in invoke(world, "status").stdout
    assert ["(patience)", "(r2c1,", "n=8,", "k=3)"] in [line.split()
                                                        for line in invoke(world, "runs").stdout.splitlines()]


# --- 2. reasons and the run's story ----------------------------------------------------------------

def test_report_tells_the_story_round_by_round_with_reasons_and_next_steps(world):
    gate = world.state.candidate("r2c1").gate_details
    state = saved_with(world, round=3, checkpoint=three_rounds(gate), config=SIM_MODELS)
    paths = write_run_reports(Workspace(world.root), GitStore(world.root), state)
    md = paths["markdown"].read_text()
    assert "### Round 1 — parent r0c0" in md and "### Round 3 — parent r2c1" in md
    assert (
        "- Diagnosed 3 failing cases of the parent with 3 diagnosers: 6 proposals (diagnoser 0: 1, diagnoser 1: 2, "
        "diagnoser 2: 3)."
        in md
    )
    assert "- Vote: kept `cancel` (2 votes); below the threshold: `refund` (1 vote)." in md
    assert "- **No child:** no skill reached the vote threshold." in md
    assert "| cancel (n=4) | 25.0% | 100.0% | 23.8% | pass |" in md
    assert "- Front: r1c1, r2c1 joined" not in md and "r2c1 joined" in md
    off = md.split("## Candidates not on the front")[1].split("##")[0]
    assert "- r0c0: dominated by r1c1" in off and "- r1c2: failed the gate: refund 50.0% \\< floor 71.2%" in off
    assert "## What failed" in md and "r1c2 failed the gate" in md
    steps = md.split("## What to do next")[1]
    assert f"1. Review the best candidate, r2c1: `frames review {RUN}/r2c1`" in steps
    assert "This run used the simulator" in steps
    data = json.loads(paths["json"].read_text())
    assert data["rounds"][2]["child"] is None and data["rounds"][2]["reason"] == "no skill reached the vote threshold"
    assert data["off_front"]["r1c2"].startswith("failed the gate")


def test_report_says_so_when_nothing_failed(world):
    state = saved_with(world, candidates=[c for c in world.state.candidates if c.id != "r1c2"])
    md = write_run_reports(Workspace(world.root), GitStore(world.root), state)["markdown"].read_text()
    assert "Nothing failed: every diagnoser answered, every rewrite validated and every child passed the gate." in md


# --- 3. the simulator notice everywhere ------------------------------------------------------------

def test_the_simulator_notice_is_in_every_output_of_a_simulated_run(world):
    notice = "a simulator of model behaviour, not a model"
    saved_with(world, config=SIM_MODELS)
    assert notice in json.loads(invoke(world, "front", "--json").stdout)["simulator_notice"]
    assert notice in json.loads(invoke(world, "review", "r1c1", "--json").stdout)["simulator_notice"]
    assert notice in invoke(world, "review", "r1c1", "--markdown", "-").stdout
    assert notice in " ".join(invoke(world, "review", "r1c1").stdout.split())
    assert notice in " ".join(invoke(world, "front").stdout.split())
    state = load_run(Workspace(world.root), RUN)
    paths = write_run_reports(Workspace(world.root), GitStore(world.root), state)
    assert notice in json.loads(paths["json"].read_text())["simulator_notice"]
    assert notice in paths["markdown"].read_text()
    # JUnit consumers (CI test tabs) show a suite's properties and its system-out.
    (suite,) = JUnitXml.fromfile(str(paths["junit"]))
    assert notice in {p.name: p.value for p in suite.properties()}["simulator_notice"]
    assert notice in ET.parse(paths["junit"]).getroot().find("testsuite/system-out").text
    assert {c.name: c.system_out for c in suite} == {"cancel": "S0 25.0%, candidate 100.0%, floor 23.8% (n=4)",
                                                     "refund": "S0 75.0%, candidate 75.0%, floor 71.2% (n=4)"}
    saved_with(world, config={**PAPERS_RULE, "models": {"executor": "openai/gpt-4.1-mini"}})
    paths = write_run_reports(Workspace(world.root), GitStore(world.root), load_run(Workspace(world.root), RUN))
    (suite,) = JUnitXml.fromfile(str(paths["junit"]))
    assert "simulator_notice" not in {p.name for p in suite.properties()}
    assert ET.parse(paths["junit"]).getroot().find("testsuite/system-out") is None
    assert json.loads(invoke(world, "front", "--json").stdout)["simulator_notice"] is None
    assert json.loads(invoke(world, "review", "r1c1", "--json").stdout)["simulator_notice"] is None


# --- 4. promote ------------------------------------------------------------------------------------

def test_promote_refuses_a_candidate_off_the_front_unless_asked(world):
    state = saved_with(world, front=["r2c1"])
    state.candidates[1].mean_tokens = 130.0  # r1c1: fewer passes and more tokens than r2c1
    save_state(Workspace(world.root), state)
    refused = invoke(world, "promote", "r1c1")
    assert refused.exit_code == 2
    assert "r1c1 is not on the front: dominated by r2c1" in " ".join(refused.stderr.split())
    assert "--allow-off-front" in refused.stderr
    assert world.git("for-each-ref", "refs/heads/frames/") == ""
    allowed = invoke(world, "promote", "r1c1", "--allow-off-front", "--json")
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(allowed.stdout)["on_front"] is False


def test_promote_refuses_a_candidate_whose_base_left_the_branch_history(world):
    # The user's branch is rebuilt from scratch: the run's base is no longer in its history.
    tree = world.git("write-tree")
    orphan = world.git("commit-tree", tree, "-m", "rewritten history")
    world.git("reset", "-q", "--soft", orphan)
    refused = invoke(world, "promote", "r2c1")
    assert refused.exit_code == 2
    assert (
        "no longer in the history of main" in " ".join(refused.stderr.split())
        and "--allow-outdated-base" in refused.stderr
    )
    allowed = invoke(world, "promote", "r2c1", "--allow-outdated-base", "--json")
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(allowed.stdout)["base_in_history"] is False


def test_promote_says_whether_the_merge_would_conflict(world):
    clean = invoke(world, "promote", "r1c1")
    assert clean.exit_code == 0 and "It merges into main without conflicts." in clean.stdout
    # Someone edits the same skill on main meanwhile.
    world.write(
        "skills/cancel/SKILL.md",
        world.git("show", "HEAD:skills/cancel/SKILL.md").replace("Cancel bookings.", "Cancel bookings politely.")
        + "\n",
    )
    world.git("commit", "-q", "-am", "edit cancel by hand")
    before = world.git("status", "--porcelain")
    result = invoke(world, "promote", "r2c1", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["merge"] == {"into": "main", "conflicts": ["skills/cancel/SKILL.md"],
                                                  "checked": True}
    text = invoke(world, "promote", "r2c1")
    assert "Merging it into main would conflict in 1 file: skills/cancel/SKILL.md" in text.stdout
    assert world.git("status", "--porcelain") == before


# --- 5. the deploy menu at 80 columns ---------------------------------------------------------------

def _wide_state() -> tuple[RunState, list[MenuRow]]:
    """Seven front members, long skill and category names."""
    cats = {"refuse-cancel-after-24-hours": 0.5, "compensation": 0.25, "modify-flights": 0.75}
    skills = [f"airline-agent-policy-{w}-general-rules" for w in ("booking", "cancellation", "refunds", "baggage")]
    cands = [Candidate(BASE_ID, "0" * 40, None, 0, 0.5, cats, 7000.0, 0.05, case_counts=dict.fromkeys(cats, 8))]
    for i in range(1, 8):
        cands.append(Candidate(f"r{i}c1", f"{i}" * 40, BASE_ID, i, 0.5 + i / 20, cats, 7000.0 + 900 * i, 0.06 + i / 100,
                               gate_passed=True, case_counts=dict.fromkeys(cats, 8)))
    state = RunState("20261201-101500-abcdef", "0" * 40, status="finished", round=7, candidates=cands,
                     front=[c.id for c in cands], config=PAPERS_RULE)
    rows = [MenuRow(c, skills[: 1 + c.round % 4] if c.parent_id else [], 10 * c.round, c.id == "r7c1") for c in cands]
    return state, rows


def test_the_menu_fits_80_columns_and_breaks_no_word():
    state, rows = _wide_state()
    narrow, wide = io.StringIO(), io.StringIO()
    print_menu(Console(file=narrow, width=80), state, rows)
    print_menu(Console(file=wide, width=1000), state, rows)
    lines = narrow.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert _words(narrow.getvalue()) <= _words(wide.getvalue())
    assert all(f"r{i}c1" in narrow.getvalue() for i in range(1, 8))
    assert narrow.getvalue().count("pass rate (n=24)") >= 2  # the members split over several tables
    assert not [line for line in lines if line != line.rstrip()]


def test_front_names_every_candidate_off_the_front_with_its_reason(world):
    text = " ".join(invoke(world, "front").stdout.split())
    assert "Not on the front: r1c2: failed the gate: refund 50.0% < floor 71.2%" in text


def test_front_at_80_and_120_columns(world):
    saved_with(world)
    for width in ("80", "120"):
        result = CliRunner().invoke(app, ["front", "--repo", str(world.root)], env={"COLUMNS": width})
        assert result.exit_code == 0
        assert max(len(line) for line in result.stdout.splitlines()) <= int(width)
        assert {"r2c1:", "cancel,", "rebook", "r1c1:"} <= _words(result.stdout)


# --- 6. small things a newcomer hits --------------------------------------------------------------

def test_version_and_flag_help():
    version = CliRunner().invoke(app, ["--version"])
    assert version.exit_code == 0 and re.fullmatch(r"frames \S+\n", version.stdout)
    help_text = CliRunner().invoke(app, ["validate", "--help"], env={"COLUMNS": "120"}).stdout
    assert "<bool>" not in help_text and "--strict" in help_text
    assert "<path>" in help_text  # options that take a value keep their label


def test_review_markdown_file_like_eval(world, tmp_path):
    out = tmp_path / "pr.md"
    result = invoke(world, "review", "r1c1", "--markdown", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("## frames candidate r1c1") and "Results per category" in result.stdout
    folder = invoke(world, "review", "r1c1", "--markdown", str(tmp_path))
    assert folder.exit_code == 2 and "names a folder" in folder.stderr


def test_terminal_review_has_no_trailing_spaces(world):
    result = CliRunner().invoke(app, ["review", "r2c1", "--repo", str(world.root)], env={"COLUMNS": "100"})
    assert result.exit_code == 0
    assert [line for line in result.stdout.splitlines() if line != line.rstrip()] == []


def test_status_prints_percentages_and_plurals(world):
    saved_with(world, round=1)
    text = invoke(world, "status").stdout
    assert ": finished, 1 round, 3 candidates\n  best pass rate 87.5% (r2c1, n=8)\n" in text
    assert "round(s)" not in text and "0.875" not in text


def test_status_lines_fit_80_columns(world):
    # Printed without wrapping (a wide terminal), every line but the workspace path fits 80
    # columns, so an 80-column terminal breaks none of them mid-phrase.
    saved_with(world, round=1)
    result = CliRunner().invoke(app, ["status", "--repo", str(world.root)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("workspace ") and any(line.startswith("last run ") for line in lines)
    assert [line for line in lines[1:] if len(line) > 80] == [], "\n".join(lines)


def test_evolve_progress_bar_counts_real_work():
    from frames_cli.commands.evolve.evolve import RunProgress
    from frames_cli.evolution.state.round_events import EvaluatingChild, Gated, RoundParent

    screen = io.StringIO()
    with RunProgress(Console(file=screen, force_terminal=True, width=100), quiet=False) as bar:
        bar.event(RoundParent(1, "r0c0"))
        assert bar.bar.tasks == []  # nothing to count yet: no bar, no "0/?"
        bar.event(EvaluatingChild(1, "r1c1", ("cancel",)))
        bar.advance(3, 50)
        (task,) = bar.bar.tasks
        assert (task.description, task.completed, task.total) == ("round 1: evaluating r1c1 (changes cancel)", 3, 50)
        bar.event(Gated(1, "r1c1", True, "pass"))
        assert bar.bar.tasks == []
    assert "0/?" not in screen.getvalue()
