"""`frames ingest` refuses input that would import nothing or look in the wrong place (exit 2, nothing written).

Invariants, one assertion each per case: the exit code is 2; the last stderr line is exactly the
message; `cases/` is unchanged.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app

runner = CliRunner()
TAU2 = Path(__file__).resolve().parents[1] / "fixtures" / "tau2-airline"


@pytest.fixture
def ws(policy_workspace, monkeypatch) -> Path:
    """A cold-started workspace of the expenses policy (skills travel, meals, claims, ...); cwd is its root."""
    root = policy_workspace("expenses.md")
    (root / "cases").mkdir()
    assert runner.invoke(app, ["coldstart", "--no-llm", "--repo", str(root)]).exit_code == 0
    monkeypatch.chdir(root)
    return root


def _cases(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "cases").iterdir())


def test_tau2_unknown_task_id_writes_nothing(ws: Path) -> None:
    done = runner.invoke(app,
                         ["ingest", "tau2", "--tasks", str(TAU2 / "tasks.json"), "--db", str(TAU2), "--task", "99999"])
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines()[-1] == f"error: {TAU2}/tasks.json: no task with id '99999' (--task)"
    assert _cases(ws) == []


def test_a_source_without_cases_or_advice_writes_nothing(ws: Path, tmp_path: Path) -> None:
    empty = tmp_path / "none.jsonl"
    empty.write_text("\n")
    done = runner.invoke(app, ["ingest", "trace", str(empty)])
    assert done.exit_code == 2
    assert (
        done.stderr.strip().splitlines()[-1]
        == "error: no case to import: the trace source holds no case and no advice; nothing written"
    )
    assert _cases(ws) == []


def test_amendment_outside_the_workspace_needs_file(ws: Path, tmp_path: Path) -> None:
    old = tmp_path / "expenses-old.md"
    new = tmp_path / "expenses-v2.md"
    shutil.copy(ws / "policies" / "expenses.md", old)
    new.write_text(old.read_text().replace("45 EUR", "50 EUR"))
    done = runner.invoke(app, ["ingest", "amendment", str(old), str(new)])
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "error: policies/expenses-v2.md: no such policy file in the workspace; name the amended policy with --file "
        "policies/<file>"
    )
    wrong = runner.invoke(app, ["ingest", "amendment", str(old), str(new), "--file", "policies/expense.md"])
    assert wrong.exit_code == 2
    assert (
        wrong.stderr.strip().splitlines()[-1]
        == "error: policies/expense.md: no such policy file in the workspace; check --file"
    )
    done = runner.invoke(app, ["ingest", "amendment", str(old), str(new), "--file", "policies/expenses.md", "--json"])
    assert done.exit_code == 0, done.output
    assert [s["skill"] for s in json.loads(done.stdout)["stale_skills"]] == ["meals"]
    assert _cases(ws) == []
