"""The commits frames makes on the user's checked-out branch: `frames coldstart`'s and `frames adopt`'s skills, and only them.

Everything else in frames commits through plumbing (`store.py`) without touching the checkout;
coldstart is different because its output is meant to land in the working tree the user sees.
Only the paths coldstart wrote or removed are staged and committed (`git commit --only`), so the
user's other staged or unstaged changes stay exactly as they were.
"""

from __future__ import annotations

from pathlib import Path

from frames_cli.errors import GitError
from frames_cli.gitstore.identity import FRAMES_IDENTITY, Identity
from frames_cli.gitstore.names import check_path
from frames_cli.gitstore.store import GitStore


def is_git_worktree(root: Path) -> bool:
    """True when `root` lies inside a git working tree."""
    from git import InvalidGitRepositoryError, NoSuchPathError

    from frames_cli.gitstore.process import SessionRepo

    try:
        with SessionRepo(root, search_parent_directories=True) as repo:
            return not repo.bare
    except (InvalidGitRepositoryError, NoSuchPathError):
        return False


def commit_paths(root: Path, paths: list[str], message: str, *, author: Identity | None = None) -> str | None:
    """Stage exactly `paths` (new, changed or deleted files) and commit only them on the current branch.

    Args:
        root: the workspace folder (may be a sub-folder of the git working tree).
        paths: POSIX paths relative to `root`, as written by coldstart.
        message: the whole commit message.
        author: the commit's author; None = the user's git identity when one is configured
            (user.name and user.email), else frames' own. The committer is the user's identity
            when configured, else the author (so a fresh CI machine without `user.name` can
            still commit).

    Returns:
        The new commit's sha, or None when none of `paths` differs from the last commit.

    Raises:
        GitError: `root` is not in a git working tree, or git refused (a hook failed, say); the
            message quotes git's own error. The files on disk are left as they are.
    """
    from git import GitCommandError

    from frames_cli.gitstore.process import SessionRepo

    root = Path(root).resolve()
    try:
        store = GitStore(root)
    except GitError:
        raise GitError(f"{root}: not a git repository (run `frames init` or `git init`)") from None
    with SessionRepo(store.root) as repo:
        specs = [store.repo_path(check_path(p)) for p in paths]
        reader = repo.config_reader()
        configured = reader.has_option("user", "name") and reader.has_option("user", "email")
        fallback = author or FRAMES_IDENTITY
        env = {} if author is None and configured else {"GIT_AUTHOR_NAME": fallback.name, "GIT_AUTHOR_EMAIL": fallback.email}
        if not configured:
            env.update(GIT_COMMITTER_NAME=fallback.name, GIT_COMMITTER_EMAIL=fallback.email)
        try:
            # A removed file that git never tracked leaves nothing to stage, and `git add` would
            # reject its path.
            # -z: without it git quotes a path with non-ASCII characters, and it would not match.
            tracked = set(repo.git.ls_files("-z", "--", *specs).split("\0"))
            specs = [s for s in specs if s in tracked or (store.root / s).exists()]
            if not specs or not repo.git.status("--porcelain", "--untracked-files=all", "--", *specs).strip():
                return None
            repo.git.add("--all", "--", *specs)
            # Files deleted with `git rm` and written again as they were: staged, yet no change.
            if repo.head.is_valid() and not repo.git.diff("--cached", "--name-only", "HEAD", "--", *specs).strip():
                return None
            repo.git.commit("--only", "--quiet", "-m", message, "--", *specs, env=env)
            return repo.git.rev_parse("HEAD")
        except GitCommandError as exc:
            detail = " ".join(str(exc.stderr or exc).split())
            raise GitError(f"git commit of {len(specs)} skill file(s) failed: {detail}") from None
