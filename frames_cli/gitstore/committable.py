"""Whether frames may commit in the user's checkout: a git working tree (`is_git_worktree`,
`open_worktree`) where git would take a commit of the skills folder now (`check_committable`: no
merge or rebase in progress, no `index.lock`, the folder inside the sparse checkout, no symlink out
of the workspace). `gitstore.worktree.CheckoutChange` checks this before it writes anything.
"""

from __future__ import annotations

from pathlib import Path

from frames_cli.errors import GitError
from frames_cli.gitstore.repo import GitRepo

# Paths are given to git literally: `*`, `?` and `:(...)` in an adopted file's name are no pattern.
LITERAL = {"GITLITERAL_PATHSPECS": "1"}


def is_git_worktree(root: Path) -> bool:
    """True when `root` lies inside a git working tree."""
    from git import InvalidGitRepositoryError, NoSuchPathError

    from frames_cli.gitstore.process import SessionRepo

    try:
        with SessionRepo(root, search_parent_directories=True) as repo:
            return not repo.bare
    except (InvalidGitRepositoryError, NoSuchPathError):
        return False


def open_worktree(root: Path) -> GitRepo:
    """The git repository whose working tree holds `root`; GitError when there is none."""
    if not is_git_worktree(root):
        raise GitError(f"{root}: not a git repository (run `frames init` or `git init`)")
    try:
        return GitRepo(Path(root).resolve())
    except GitError:
        raise GitError(f"{root}: not a git repository (run `frames init` or `git init`)") from None


def check_committable(root: Path, folder: str = "skills") -> None:
    """Refuse, before anything is written, a repository where a commit of `folder` (workspace-relative)
    cannot be made cleanly.

    Raises:
        InputError: `folder` (or a folder on its way) is a symlink leading out of the workspace.
        GitError: `root` is not in a git work tree; a merge, rebase, cherry-pick, revert or bisect is
            in progress (its commit would take frames' files); git's index is locked
            (`index.lock`); `folder` lies outside the sparse checkout (its files would be written
            where git does not track them). Each message says what to do.
    """
    from frames_cli.files.links import refuse_symlink

    # Files written through a link leading out of the workspace would land outside it.
    refuse_symlink(Path(root).resolve(), Path(root).resolve() / folder, folder)
    repo = open_worktree(root)
    git_path = _git_paths(repo)
    for name, what, fix in (
        ("MERGE_HEAD", "a merge", "finish it (`git commit`) or abort it (`git merge --abort`)"),
        ("CHERRY_PICK_HEAD", "a cherry-pick", "finish it or `git cherry-pick --abort`"),
        ("REVERT_HEAD", "a revert", "finish it or `git revert --abort`"),
        ("rebase-merge", "a rebase", "finish it (`git rebase --continue`) or `git rebase --abort`"),
        ("rebase-apply", "a rebase or `git am`", "finish it or abort it (`git rebase --abort`, `git am --abort`)"),
        ("BISECT_LOG", "a bisect", "end it with `git bisect reset`"),
    ):
        if git_path(name).exists():
            raise GitError(f"git is in the middle of {what}; {fix}, then run frames again (nothing was written)")
    lock = git_path("index.lock")
    if lock.exists():
        raise GitError(
            f"git's index is locked ({lock} exists): another git command is running, or one was stopped; "
            "if none is running, delete that file and run frames again (nothing was written)"
        )
    if repo._run("config", "--bool", "--default", "false", "core.sparseCheckout") == "true":
        _check_sparse(repo, folder)


def _git_paths(repo: GitRepo):  # type: ignore[no-untyped-def]
    """A function giving the path of a file in the repository's git folder (`git rev-parse --git-path`)."""
    names = [
        "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply", "BISECT_LOG", "index.lock",
        "index",
    ]
    found = dict(zip(names, repo._run("rev-parse", *[a for n in names for a in ("--git-path", n)]).split("\n")))
    return lambda name: repo.root / found[name]


def _check_sparse(repo: GitRepo, folder: str) -> None:
    """Refuse a `folder` the sparse checkout leaves out: its tracked files are not on disk (skip-worktree),
    or, in cone mode, no cone holds it."""
    target = repo.repo_path(folder)
    hidden = [
        e for e in repo._run("ls-files", "-t", "-z", "--", target, env=LITERAL).split("\0") if e.startswith("S ")
    ]
    cone = repo._run("config", "--bool", "--default", "false", "core.sparseCheckoutCone") == "true"
    outside = bool(hidden)
    if cone and not outside:
        dirs = [d.strip("/") for d in repo._run("sparse-checkout", "list").splitlines() if d.strip()]
        outside = not any(target == d or target.startswith(d + "/") for d in dirs)
    if outside:
        raise GitError(
            f"{folder}/ lies outside this sparse checkout, so its skills are not on disk; "
            f"add it (`git sparse-checkout add {target}`) and run frames again (nothing was written)"
        )
