"""SessionGit / SessionRepo: git processes frames starts are out of reach of the terminal's Ctrl-C.

Invariant: every git process runs in a session (hence a process group) other than frames' own,
so a signal sent to frames' process group (Ctrl-C, a service's SIGTERM) does not kill the git
commands of the step frames is finishing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from helpers import init_git_repo

from frames_cli.gitstore.process import SessionRepo

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists() or sys.platform == "win32", reason="reads /proc")


def session_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[4])


def test_git_processes_run_in_a_session_of_their_own(tmp_path: Path) -> None:
    git = init_git_repo(tmp_path / "repo")
    (git.root / "a.txt").write_text("a\n")
    git.git("add", "a.txt")
    git.git("commit", "-q", "-m", "a")
    with SessionRepo(git.root) as repo:
        # A persistent `git cat-file --batch-check` stays alive between reads: a git process to inspect.
        repo.git.get_object_header("HEAD")
        process = repo.git.cat_file_header.proc
        # Not in this process's session or group, so a signal to the group does not reach it
        # (sending one here would also reach the test runner).
        assert session_of(process.pid) != os.getsid(0)
        assert os.getpgid(process.pid) != os.getpgid(0)
        assert repo.git.get_object_header("HEAD")[1] == b"commit"
