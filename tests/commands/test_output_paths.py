"""Output paths the user names: refused before any work (exit 2), `-` is standard output, and an I/O
failure at run time is `error: <file>: <reason>` with exit 1, never a traceback.

Invariants, one assertion each where they apply:
1. a path that can never be written exits 2 with `error: <path>: <option> ...` before anything runs
   (no evaluation folder, no case file);
2. `-` prints on stdout and creates no file named `-`; two outputs on stdout are refused (exit 2);
3. an OSError reaching `guarded` prints `error: <filename>: <strerror>` and exits 1.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.commands.common import guarded
from frames_cli.files.atomic import atomic_write_text

runner = CliRunner()
CASE = """\
- id: bags-1
  category: baggage
  source: {kind: manual, ref: fixture}
  created: "2026-11-29"
  task:
    input: {text: "I am a silver member flying economy. How many free checked bags do I get?"}
    expected: "2"
    check: {kind: exact}
"""
PROC = Path("/proc/x.md")
needs_proc = pytest.mark.skipif(not Path("/proc/self").is_dir(),
                                reason="needs Linux /proc (a folder that accepts no files)")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace on the simulator with one skill and one case."""
    root = tmp_path / "ws"
    (root / "cases").mkdir(parents=True)
    (root / "skills" / "bags").mkdir(parents=True)
    (root / "frames.yaml").write_text("version: 1\nmodels:\n  executor: frames-sim/executor\n")
    (root / "skills" / "bags" / "SKILL.md").write_text("---\nname: bags\ndescription: Free bags.\n---\nSilver members "
                                                       "get 2 free checked bags.\n")
    (root / "cases" / "bags.yaml").write_text(CASE)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return root


def _eval(ws: Path, *args: str):
    return runner.invoke(app, ["eval", "--repo", str(ws), *args])


def test_junit_to_a_folder_is_refused_before_evaluating(ws: Path, tmp_path: Path) -> None:
    done = _eval(ws, "--junit", str(tmp_path))
    assert done.exit_code == 2
    assert done.stderr.strip() == f"error: {tmp_path}: --junit names a folder; give a file path"
    assert not (ws / ".frames" / "evals").exists()


@needs_proc
def test_markdown_where_no_file_can_be_made_is_refused(ws: Path) -> None:
    done = _eval(ws, "--markdown", str(PROC))
    assert done.exit_code == 2
    assert (
        done.stderr.strip() == "error: /proc/x.md: --markdown: cannot create files in /proc: No such file or directory"
    )
    assert not (ws / ".frames" / "evals").exists()


def test_markdown_under_a_file_is_refused(ws: Path) -> None:
    (ws / "notes.txt").write_text("a file\n")
    done = _eval(ws, "--markdown", str(ws / "notes.txt" / "out" / "eval.md"))
    assert done.exit_code == 2
    assert (
        done.stderr.strip() == f"error: {ws}/notes.txt/out/eval.md: --markdown: {ws}/notes.txt is a file, not a folder"
    )


def test_markdown_dash_prints_on_stdout_instead_of_the_table(ws: Path, monkeypatch) -> None:
    monkeypatch.chdir(ws)
    done = _eval(ws, "--markdown", "-")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("## frames eval\n")
    assert "| baggage | 1 |" in done.stdout and "model calls:" not in done.stdout
    assert not (ws / "-").exists()


def test_two_outputs_on_stdout_are_refused(ws: Path) -> None:
    done = _eval(ws, "--json", "--markdown", "-", "--junit", "-")
    assert done.exit_code == 2
    assert (
        done.stderr.strip() == "error: --json and --markdown - and --junit - cannot share standard output; choose one"
    )


@needs_proc
def test_ingest_out_where_no_file_can_be_made_writes_nothing(ws: Path, tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps({"input": "How many bags?", "output": "3", "outcome": "failure",
                                  "expected": "2"}) + "\n")
    before = sorted(p.name for p in (ws / "cases").iterdir())
    done = runner.invoke(app, ["ingest", "trace", str(traces), "--out", "/proc/x.yaml", "--repo", str(ws)])
    assert done.exit_code == 2
    assert done.stderr.strip() == "error: /proc/x.yaml: --out: cannot create files in /proc: No such file or directory"
    assert sorted(p.name for p in (ws / "cases").iterdir()) == before


def test_an_io_failure_at_run_time_is_one_line_and_exit_1(tmp_path: Path) -> None:
    one = typer.Typer()
    one.command()(guarded(lambda: (tmp_path / "gone" / "x.txt").read_text()))
    done = runner.invoke(one, [])
    assert done.exit_code == 1
    assert done.stderr.strip() == f"error: {tmp_path}/gone/x.txt: No such file or directory"


@needs_proc
def test_atomic_write_names_the_target_not_its_temporary_file() -> None:
    with pytest.raises(FileNotFoundError) as caught:
        atomic_write_text(PROC, "text")
    assert caught.value.filename == str(PROC)
