"""`frames eval` end to end on the simulator: per-category output, cache, thresholds, CI files, --ref, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import JUnitXml
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.llm.store.audit import read_exchanges

ROOT = Path(__file__).resolve().parents[2]
CONFIG = "version: 1\nmodels:\n  executor: frames-sim/executor\n  judge: frames-sim/judge\nllm:\n  concurrency: 4\n"
SKILLS = {
    "baggage-allowance": ("Free checked bags by membership and cabin.",
                          "Silver members get 2 free checked bags per passenger in economy."),
    "cancel-flight": ("Cancel reservations.",
                      "Basic economy reservations can be cancelled only within 24 hours of booking."),
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A git workspace: frames.yaml on the simulator, two skills, and ten bundled tau2 cases."""
    root = tmp_path / "ws"
    (root / "cases").mkdir(parents=True)
    (root / "frames.yaml").write_text(CONFIG)
    for name, (description, body) in SKILLS.items():
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
        )
    bundled = (ROOT / "cases" / "tau2-airline.yaml").read_text()
    # The first ten cases: keep the YAML list items up to the eleventh "- id:".
    items = bundled.split("\n- id: ")
    (root / "cases" / "tau2.yaml").write_text("\n- id: ".join(items[:10]) + "\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "add", ".")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")
    return root


def run(*args: str):
    return CliRunner().invoke(app, ["eval", *args])


def test_eval_reports_categories_and_rerun_makes_no_model_call(ws: Path) -> None:
    first = run("--repo", str(ws), "--json", "--samples", "2")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["model_calls"] == 10 * 2 * 2
    assert set(data["per_category"]) == {"refuse-cancel", "compensation", "baggage", "refuse", "change-cabin"}
    assert data["overall"]["n_cases"] == 10 and data["overall"]["pass_at_k"] is not None
    assert data["mean_prompt_tokens"] > 0 and data["cost_usd"] > 0
    second = run("--repo", str(ws), "--json", "--samples", "2")
    again = json.loads(second.stdout)
    assert again["model_calls"] == 0
    assert again["results"] == data["results"]
    pool = json.loads((ws / ".frames" / "regression-pool.json").read_text())
    passing = {r["case_id"] for r in data["results"]} - {r["case_id"] for r in data["results"] if not r["passed"]}
    assert {e["case_id"] for e in pool["entries"]} == passing


def test_table_thresholds_and_ci_files(ws: Path, tmp_path: Path) -> None:
    md, xml = tmp_path / "out" / "eval.md", tmp_path / "out" / "eval.xml"
    result = run("--repo", str(ws), "--markdown", str(md), "--junit", str(xml), "--min-pass-rate", "0.99",
                 "--min-category-pass-rate", "0.99")
    assert result.exit_code == 100
    assert (
        "threshold failed: overall pass rate" in result.stderr and "category refuse-cancel: pass rate" in result.stderr
    )
    assert "refuse-cancel" in result.stdout and "overall" in result.stdout and "mean tokens per case" in result.stdout
    assert "executor, judge ran on frames-sim, a simulator of model behaviour, not a model" in result.stdout
    assert md.read_text().startswith("## frames eval")
    suites = {s.name: s.tests for s in JUnitXml.fromfile(str(xml))}
    assert sum(suites.values()) == 10 and suites["compensation"] == 2 and suites["refuse-cancel"] == 2
    notice = "a simulator of model behaviour, not a model"
    assert all(notice in {p.name: p.value for p in s.properties()}["simulator_notice"]
               for s in JUnitXml.fromfile(str(xml)))
    outs = [s.find("system-out").text for s in ET.parse(xml).getroot().iter("testsuite")]
    assert len(outs) == len(suites) and all(notice in o for o in outs)
    assert run("--repo", str(ws), "--min-pass-rate", "0").exit_code == 0


def test_ref_reads_committed_skills_not_the_working_tree(ws: Path) -> None:
    (ws / "skills" / "cancel-flight" / "SKILL.md").unlink()
    (ws / "skills" / "cancel-flight").rmdir()
    work_tree = run("--repo", str(ws), "--json", "--no-cache")
    at_head = run("--repo", str(ws), "--json", "--no-cache", "--ref", "HEAD")
    assert work_tree.exit_code == 0 and at_head.exit_code == 0
    # Run ids made in the same second order by their random suffix, so take the folders from the output.
    runs = [Path(json.loads(r.stdout)["run_dir"]) for r in (work_tree, at_head)]
    catalogs = [read_exchanges(r / "exchanges.jsonl")[0]["messages"][0]["content"] for r in runs]
    assert "1 skills available:" in catalogs[0] and "2 skills available:" in catalogs[1]
    assert json.loads((runs[1] / "report.json").read_text())["commit"] == git(ws, "rev-parse", "HEAD")


def test_bad_case_file_exits_2_with_path_and_line(ws: Path) -> None:
    (ws / "cases" / "bad.yaml").write_text("- id: x\n  category: c\n  task:\n    input: q\n    expected: 1\n    check: "
                                           "{kind: fuzzy}\n")
    result = run("--repo", str(ws))
    assert result.exit_code == 2
    assert f"{ws / 'cases' / 'bad.yaml'}:6: unknown check kind 'fuzzy'" in result.stderr
    assert run("--repo", str(ws), "--cases", "nothing/*.yaml").exit_code == 2


def test_command_agent_from_config(ws: Path) -> None:
    agent = ROOT / "tests" / "executor" / "agent.py"
    (ws / "frames.yaml").write_text(CONFIG + f"executor:\n  kind: command\n  command: [{json.dumps(sys.executable)}, "
                                             f"{json.dumps(str(agent))}]\n  timeout_s: 20\n")
    result = run("--repo", str(ws), "--json", "--cases", "cases/tau2.yaml")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["model_calls"] == 0
    # The test agent answers null: every case fails its set check with a clear reason, none crashes.
    assert all(r["error"] is None and r["reason"] == "expected a list, got NoneType" for r in data["results"])


def test_provider_refusing_every_call_is_a_run_time_failure_not_a_zero_pass_rate(ws: Path) -> None:
    (ws / "frames.yaml").write_text(CONFIG + "  max_retries: 0\nsimulator:\n  faults:\n    rate_limit: 1.0\n")
    result = run("--repo", str(ws))
    assert result.exit_code == 1
    assert "error: no case got an answer; every call failed, first with:" in result.stderr
    assert "RateLimitError" in result.stderr
    assert not (ws / ".frames" / "regression-pool.json").exists()


def test_jobs_2_gives_the_report_of_one_process_and_one_ledger(ws: Path) -> None:
    parallel = run("--repo", str(ws), "--jobs", "2", "--no-cache")
    assert parallel.exit_code == 0, parallel.output
    assert "model calls: 20 " in parallel.stdout
    [run_dir] = (ws / ".frames" / "evals").iterdir()
    ledger = json.loads((run_dir / "ledger.json").read_text())
    assert ledger["roles"]["executor"]["calls"] == 20 and ledger["total_tokens"] > 0
    assert len(read_exchanges(run_dir / "exchanges.jsonl")) == 20
    single = run("--repo", str(ws), "--json", "--no-cache", "--jobs", "1")
    assert single.exit_code == 0, single.output
    data = json.loads(single.stdout)
    assert json.loads((run_dir / "report.json").read_text())["results"] == data["results"]
    assert data["model_calls"] == 20


def test_a_symlinked_skill_folder_is_not_offered_and_is_named(tmp_path: Path) -> None:
    # issue 15: a symlinked skill folder was offered to the agent in `frames eval`; then silently skipped.
    from helpers.airline import build_repo, skill_text

    repo = build_repo(tmp_path / "ws")
    outside = tmp_path / "outside" / "linked"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text(skill_text("linked", "An outside skill.", "# Linked\n\n- Outside rule.\n"))
    (repo.root / "skills" / "linked").symlink_to(outside)

    result = CliRunner().invoke(app, ["eval", "--repo", str(repo.root), "--json"])

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [(Path(p["location"]).name, "is a symlink" in p["message"]) for p in data["left_out"]] == [("linked", True)]
    assert all("linked" not in r["skills_used"] for r in data["results"])
