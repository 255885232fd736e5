"""GitRepo: the repository containing a workspace, seen from the
workspace folder: paths, running git, resolving revisions."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from git.exc import GitCommandError

from frames_cli.errors import GitError, UnknownRevisionError
from frames_cli.gitstore.process import SessionGit

SKILLS_PREFIX = "skills/"
# Regular files only: symlinks could point outside `skills/`, submodules are not skill text.
FILE_MODES = {"100644", "100755"}


class GitRepo:
    """The git repository containing `root` (the workspace folder): the base of GitStore's parts
    (gitstore/store.py), which read and write through `_run` and `resolve`.

    Paths in arguments and results are relative to `root` (see gitstore/store.py's module docstring).
    """

    def __init__(self, root: Path):
        """Open the repository containing `root`; `self.root` becomes its top-level folder and
        `self.prefix` the path of `root` below it ("" at the top level, else "sub/dir/").

        Raises:
            GitError: `root` is not a folder inside a git work tree.
        """
        if not Path(root).is_dir():
            # GitPython would run git in the process's folder instead, and find some other repository.
            raise GitError(f"{root}: no such folder")
        here = Path(root).resolve()
        try:
            top, prefix, common = (
                SessionGit(here).rev_parse("--show-toplevel", "--show-prefix", "--git-common-dir").split("\n")
            )
        except (GitCommandError, OSError) as exc:
            detail = git_stderr(exc) if isinstance(exc, GitCommandError) else str(exc)
            raise GitError(f"{root}: not a git repository ({detail})") from None
        self.root = Path(top)
        # Split on the line breaks alone, not stripped: a folder name may begin with a space.
        self.prefix = prefix
        # The repository's common git folder (shared by linked worktrees), for the notes lock;
        # git prints it relative to the folder it ran in.
        self._common_dir = here / common
        self._git = SessionGit(self.root)

    def repo_path(self, path: str) -> str:
        """The repository path (from the top level) of the workspace-relative POSIX `path`.

        "" is the workspace folder itself ("" at the top level, else the prefix without its "/").
        """
        return (self.prefix + path) if path else self.prefix.rstrip("/")

    def workspace_path(self, path: str) -> str | None:
        """The workspace-relative form of repository path `path`; None when it lies outside the workspace."""
        if not self.prefix:
            return path
        return path[len(self.prefix) :] if path.startswith(self.prefix) else None

    def _run(self, *args: str, env: dict[str, str] | None = None, stdin: BinaryIO | None = None) -> str:
        """`git args` in the repository (`env` added to the process's, `stdin` an open binary file).

        Returns stdout without its final newline. Raises GitError with git's message on failure.
        """
        try:
            return self._git.execute(["git", *args], env=env, istream=stdin)
        except GitCommandError as exc:
            raise GitError(f"git {args[0]} failed: {git_stderr(exc)}") from None

    def resolve(self, ref: str) -> str:
        """The full 40-hex commit sha that `ref` (branch, tag, sha, `HEAD~2`, ...) names.

        Raises:
            UnknownRevisionError: `ref` is empty, looks like an option, or names no commit (exit 2:
                revisions come from the user); in a repository without any commit the message says
                how to make the first one.
        """
        if not ref or ref.startswith("-"):
            raise UnknownRevisionError(f"not a revision: {ref!r}")
        try:
            return self._git.rev_parse("--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        except GitCommandError:
            if not self._git.rev_list("-n", "1", "--all"):
                raise UnknownRevisionError(
                    f"unknown revision {ref!r}: the repository has no commit yet "
                    "(commit your skills first; `frames coldstart` makes the first commit)"
                ) from None
            raise UnknownRevisionError(f"unknown revision or not a commit: {ref!r}") from None


def git_stderr(exc: GitCommandError) -> str:
    """Git's own message from a failed command, on one line."""
    text = exc.stderr if isinstance(exc.stderr, str) else str(exc)
    return " ".join(text.replace("stderr:", "").split()).strip("' ")
