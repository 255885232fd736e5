"""Safe names for git: ref names and workspace paths built from user text are checked before git sees them."""

from __future__ import annotations

from git.exc import GitCommandError

from frames_cli.errors import InputError
from frames_cli.gitstore.process import SessionGit


def check_ref_name(ref: str) -> str:
    """Return `ref` if git accepts it as a full ref name (`git check-ref-format`) and it is no option.

    Use on every ref built from user text (run ids, candidate ids, `--branch` names).

    Raises:
        InputError: the name starts with "-" or `git check-ref-format` rejects it (for example "..",
            spaces, "~", "^", ":", "@{", a trailing ".lock" or "/").
    """
    if not ref or ref.startswith("-") or "\0" in ref:
        raise InputError(f"unsafe ref name {ref!r}")
    try:
        SessionGit().check_ref_format(ref)
    except GitCommandError:
        raise InputError(f"unsafe ref name {ref!r}: git check-ref-format rejects it") from None
    return ref


def check_path(path: str) -> str:
    """Return `path` if it is a safe workspace-relative POSIX file path, for `commit_files` and
    `worktree.CheckoutChange.touch` (both map it to the repository with `GitStore.repo_path`).

    Raises:
        InputError: empty, absolute, with a backslash or NUL, or with an empty, `.`, `..` or `.git` part.
    """
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or "\0" in path
        or any(part in ("", ".", "..") or part.lower() == ".git" for part in path.split("/"))
    ):
        raise InputError(f"unsafe path in a commit: {path!r}")
    return path
