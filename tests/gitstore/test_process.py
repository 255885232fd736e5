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

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="sessions are POSIX")


def test_git_processes_run_in_a_session_of_their_own(tmp_path: Path) -> None:
    git = init_git_repo(tmp_path / "repo")
    (git.root / "a.txt").write_text("a\n")
    git.git("add", "a.txt")
    git.git("commit", "-q", "-m", "a")
    with SessionRepo(git.root) as repo:
        # A persistent `git cat-file --batch-check` stays alive between reads: a git process to inspect.
        repo.git.get_object_header("HEAD")
        process = repo.git.cat_file_header.proc
        # It leads a session and group of its own, so a signal to frames' group does not reach it
        # (sending one here would also reach the test runner). Compared with its own pid, not with
        # os.getsid(0): in a container whose session leader is outside the PID namespace, that is 0.
        assert os.getsid(process.pid) == process.pid
        assert os.getpgid(process.pid) == process.pid != os.getpgid(0)
        assert repo.git.get_object_header("HEAD")[1] == b"commit"
