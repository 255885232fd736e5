"""SessionGit and SessionRepo: GitPython whose git processes run in a session of their own."""

from __future__ import annotations

from typing import Any

from git import Repo
from git.cmd import Git


class SessionGit(Git):
    """GitPython's Git, each git process started in a new session (`setsid`; POSIX only).

    Ctrl-C and a service manager's SIGTERM reach the whole foreground process group. frames stops
    after its current step on either, and that step's git commands (a candidate's objects, refs
    and notes) must finish: killed by the same signal, they failed the step ("git update-ref
    failed", "unsafe ref name") and frames exited 1 or 2, not 130 or 143. A git command ends on
    its own within a step; frames never needs to interrupt one.
    """

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        """`Git.execute`, with `start_new_session=True` unless the caller says otherwise."""
        kwargs.setdefault("start_new_session", True)
        return super().execute(*args, **kwargs)


class SessionRepo(Repo):
    """GitPython's Repo whose git commands, persistent `cat-file` processes included, use SessionGit."""

    GitCommandWrapperType = SessionGit
