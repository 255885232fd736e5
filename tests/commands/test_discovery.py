"""Workspace discovery as git does it: frames.yaml in the current folder or a parent, up to the
repository root; `frames init` refuses inside an existing workspace.

Invariants:
1. Every command run from `skills/` or a folder nested deeper finds the workspace above it and
   prints what it prints at the top.
2. The search stops at the repository root: a frames.yaml above it is never taken.
3. `frames init` inside a workspace exits 2 and writes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app

runner = CliRunner()


@pytest.fixture
def workspace(policy_workspace) -> Path:
    root = policy_workspace("airline.md")
    assert runner.invoke(app, ["coldstart", "--repo", str(root)]).exit_code == 0
    return root


def run_in(folder: Path, *args: str):
    before = Path.cwd()
    os.chdir(folder)
    try:
        return runner.invoke(app, list(args))
    finally:
        os.chdir(before)


@pytest.mark.parametrize("sub", ["skills", "skills/{skill}/deeper/still"])
def test_commands_find_the_workspace_from_a_subfolder(workspace: Path, sub: str) -> None:
    skill = sorted(p.name for p in (workspace / "skills").iterdir())[0]
    folder = workspace / sub.format(skill=skill)
    folder.mkdir(parents=True, exist_ok=True)
    top = run_in(workspace, "status", "--json")
    below = run_in(folder, "status", "--json")
    assert below.exit_code == 0, below.output
    assert json.loads(below.stdout) == json.loads(top.stdout)
    checked = run_in(folder, "validate")
    assert checked.exit_code == run_in(workspace, "validate").exit_code
    assert run_in(folder, "runs", "--json").exit_code == 0


def test_repo_option_names_any_folder_in_the_workspace(workspace: Path) -> None:
    done = runner.invoke(app, ["status", "--repo", str(workspace / "skills"), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["skills"] > 0


def test_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "frames.yaml").write_text("version: 1\n")
    inner = tmp_path / "other-repo"
    subprocess.run(["git", "init", "-q", str(inner)], check=True)
    (inner / "docs").mkdir()
    done = run_in(inner / "docs", "status")
    assert done.exit_code == 2
    assert "not a frames workspace: no frames.yaml here or in a parent folder up to the repository root" in done.stderr
    assert str(inner) in done.stderr


def test_outside_any_repository_only_the_folder_itself_counts(tmp_path: Path) -> None:
    (tmp_path / "frames.yaml").write_text("version: 1\n")
    (tmp_path / "sub").mkdir()
    done = run_in(tmp_path / "sub", "status")
    assert done.exit_code == 2 and "not a frames workspace: no frames.yaml here" in done.stderr


def test_init_refuses_inside_a_workspace(workspace: Path) -> None:
    before = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if ".git" not in p.parts)
    in_skills = run_in(workspace / "skills", "init")
    assert in_skills.exit_code == 2
    assert f"inside the frames workspace at {workspace}" in in_skills.stderr
    nested = runner.invoke(app, ["init", str(workspace / "skills" / "team-b")])
    assert nested.exit_code == 2
    after = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if ".git" not in p.parts)
    assert after == before
    assert run_in(workspace / "skills", "validate").exit_code == run_in(workspace, "validate").exit_code


def test_init_again_at_the_workspace_itself_is_fine(workspace: Path) -> None:
    done = run_in(workspace, "init")
    assert done.exit_code == 0, done.output
