"""A revision the user names that is no commit is bad input: exit 2 with a clear message, nothing written.

Invariants, one assertion each per command: the exit code is 2; the first stderr line is exactly the
message; in a repository without any commit the message says how to make the first one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app

runner = CliRunner()
NO_COMMIT = ("error: unknown revision 'HEAD': the repository has no commit yet (commit your skills first; `frames "
             "coldstart` makes the first commit)")


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch) -> Path:
    """A workspace just made by `frames init`: git repository, no commit yet; cwd is its root."""
    root = tmp_path / "ws"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    monkeypatch.chdir(root)
    return root


def _commit_all(root: Path) -> None:
    for args in (["add", "."], ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_evolve_before_the_first_commit_says_how_to_make_it(fresh: Path) -> None:
    done = runner.invoke(app, ["evolve"])
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines()[-1] == NO_COMMIT
    assert not (fresh / ".frames" / "runs").exists()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["eval", "--ref", "nosuchref"], "error: unknown revision or not a commit: 'nosuchref'"),
        (["ingest", "amendment", "--git", "nosuch..HEAD"], "error: unknown revision or not a commit: 'nosuch'"),
        (["evolve", "--base", "HEAD:skills"], "error: unknown revision or not a commit: 'HEAD:skills'"),
    ],
    ids=["eval-ref", "ingest-amendment-git", "evolve-base-tree"],
)
def test_unknown_revision_is_bad_input(fresh: Path, args: list[str], line: str) -> None:
    _commit_all(fresh)
    done = runner.invoke(app, args)
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines()[-1] == line
