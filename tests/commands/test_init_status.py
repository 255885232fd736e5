"""`frames init` (idempotent, commented config, git init) and `frames status`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.workspace.config import TEAM_SETTINGS, FramesConfig
from frames_cli.workspace.config_file import load_config, render_config

runner = CliRunner()


def _state(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else b"<dir>", p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if ".git" not in p.relative_to(root).parts[:1] or p.name == ".gitignore"
    }


def test_init_makes_a_workspace_and_twice_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "new" / "ws"
    done = runner.invoke(app, ["init", str(root), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["created"] == [".", "frames.yaml", "policies/", "skills/", "cases/", ".gitignore",
                                                  "git repository"]
    written = (root / "frames.yaml").read_text()
    assert written == render_config(only=TEAM_SETTINGS)
    assert load_config(root) == FramesConfig()
    assert (
        "  max_tokens: 20000000  # prompt + completion tokens per run (each frames eval or evolve); null = no limit"
        in written
    )
    assert "docs/settings.md" in written.splitlines()[1]
    assert "coldstart:\n" not in written and "simulator:" not in written
    assert (root / ".gitignore").read_text() == ".frames/\n"
    assert (
        subprocess.run(
            ["git", "rev-parse", "--is-inside-work-tree"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        == "true"
    )

    before = _state(root)
    again = runner.invoke(app, ["init", str(root)])
    assert again.exit_code == 0
    assert again.stdout.strip() == f"Workspace at {root} is complete; nothing changed."
    assert _state(root) == before


def test_init_in_existing_repo_keeps_its_files(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.pyc")
    (root / "frames.yaml").write_text("llm:\n  concurrency: 2\n")
    done = runner.invoke(app, ["init", str(root), "--json"])
    assert json.loads(done.stdout)["created"] == ["policies/", "skills/", "cases/", ".gitignore (.frames/ line)"]
    assert (root / ".gitignore").read_text() == "*.pyc\n.frames/\n"
    assert (root / "frames.yaml").read_text() == "llm:\n  concurrency: 2\n"


def test_init_refuses_invalid_existing_config(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "frames.yaml").write_text("models:\n  executer: gpt\n")
    done = runner.invoke(app, ["init", str(root)])
    assert done.exit_code == 2
    assert done.stderr.startswith(f"error: {root}/frames.yaml:2: unknown key `models.executer`")
    assert sorted(p.name for p in root.iterdir()) == ["frames.yaml"]


def test_status_reports_skills_cases_coverage_and_runs(policy_workspace) -> None:
    root = policy_workspace("airline.md")
    (root / "cases").mkdir()
    (root / "cases" / "c.yaml").write_text(
        "- id: c1\n  category: cancel\n  source: {kind: manual, ref: t}\n  created: '2026-11-29'\n"
        "  task: {input: {text: 'Cancel?'}, expected: 'no', check: {kind: exact}, answer_format: yes or no}\n"
        "- id: c2\n  category: cancel\n  source: {kind: manual, ref: t}\n  created: '2026-11-29'\n"
        "  task: {input: {text: 'Cancel now?'}, expected: 'yes', check: {kind: exact}, answer_format: yes or no}\n"
        "- id: b1\n  category: baggage\n  source: {kind: manual, ref: t}\n  created: '2026-11-29'\n"
        "  task: {input: {text: 'Bags?'}, expected: '2', check: {kind: exact}, answer_format: a number}\n"
    )
    assert runner.invoke(app, ["coldstart", "--repo", str(root)]).exit_code == 0
    data = json.loads(runner.invoke(app, ["status", "--repo", str(root), "--json"]).stdout)
    assert data["skills"] == 6 and data["stale"] == [] and data["edited_since_coldstart"] == []
    assert data["cases_by_category"] == {"baggage": 1, "cancel": 2}
    assert data["coverage"][0]["covered_once"] == data["coverage"][0]["content_lines"] == 120
    assert data["last_run"] is None and data["errors"] == 0
    checked = json.loads(runner.invoke(app, ["validate", "--repo", str(root), "--json"]).stdout)
    assert checked == {"ok": True, "errors": 0, "warnings": 0, "problems": []}
    (root / "cases" / "c.yaml").write_text("- id: x1\n  category: cancel\n")
    checked = json.loads(runner.invoke(app, ["validate", "--repo", str(root), "--json"]).stdout)
    assert checked["ok"] is False and checked["errors"] == 1 and checked["problems"][0]["path"].endswith("cases/c.yaml")
    text = runner.invoke(app, ["status", "--repo", str(root)]).stdout
    assert "policy policies/airline.md: 120/120 content lines covered by exactly one skill" in text
    assert "last run: none" in text


def test_a_workspace_whose_frames_yaml_holds_a_retired_key_keeps_working_and_is_told(tmp_path: Path) -> None:
    import sys

    root = tmp_path / "ws"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    config = root / "frames.yaml"
    lines = config.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("evolution:")) + 1
    config.write_text("".join([*lines[:at], "  regression_sample: 100  # an older frames init wrote it\n",
                               *lines[at:]]))
    said = "`evolution.regression_sample` is no longer a setting"

    checked = runner.invoke(app, ["validate", "--repo", str(root)])
    strict = runner.invoke(app, ["validate", "--strict", "--repo", str(root)])
    status = subprocess.run([sys.executable, "-m", "frames_cli", "status", "--repo", str(root)], capture_output=True,
                            text=True, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "300"})

    assert checked.exit_code == 0 and strict.exit_code == 2
    assert f"frames.yaml:{at + 1}: warning: {said}" in checked.stdout
    assert status.returncode == 0, status.stderr
    assert status.stderr.splitlines() == [
        f"warning: {config}:{at + 1}: {said} (pool cases are workspace cases, placed in a set by `evolution.split`): "
        "it is ignored; delete the line"
    ]


def test_init_inside_a_bare_repository_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    # Issue 29: frames init there wrote frames.yaml among git's files and ran `git init`, which made
    # the bare repository a broken non-bare one.
    bare = tmp_path / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    before = sorted(p.name for p in bare.iterdir())
    for target in (bare, bare / "sub"):
        result = CliRunner().invoke(app, ["init", str(target)])
        assert result.exit_code == 2 and "bare repository" in result.stderr
    assert sorted(p.name for p in bare.iterdir()) == before
    assert (
        subprocess.run(
            ["git", "-C", str(bare), "rev-parse", "--is-bare-repository"], capture_output=True, text=True
        ).stdout.strip()
        == "true"
    )
