"""Making a workspace (`frames init`): what is missing is created, what exists is never touched."""

from __future__ import annotations

from pathlib import Path

from frames_cli.errors import InputError, Location
from frames_cli.files.atomic import atomic_write_text
from frames_cli.workspace.config import CONFIG_FILE, TEAM_SETTINGS
from frames_cli.workspace.config_file import load_config, render_config
from frames_cli.workspace.layout import find_workspace_root, repository_root

GITIGNORE_LINE = ".frames/"


def refuse_nested(root: Path) -> None:
    """Refuse a workspace inside another one: `frames init` in `skills/` would make a second
    `frames.yaml` that commands run there would take for the real one.

    Raises:
        InputError: a parent folder of `root`, in the same git repository, holds `frames.yaml`.
    """
    existing = root
    while not existing.exists():
        existing = existing.parent
    top = repository_root(existing)
    if top is None or root == top:
        return
    outer = find_workspace_root(root.parent)
    if outer is not None:
        raise InputError(
            f"inside the frames workspace at {outer}; run frames commands there (they find it from any "
            "subfolder), or give a folder outside it",
            Location(root),
        )


def refuse_git_dir(root: Path) -> None:
    """Refuse a folder inside a repository's own git folder: a bare repository or a `.git` folder.

    `frames init` there wrote its files among git's and ran `git init`, which turned a bare
    repository into a broken non-bare one.

    Raises:
        InputError: git says `root` (or its nearest existing parent) is inside a git folder.
    """
    from git.exc import GitCommandError

    from frames_cli.gitstore.process import SessionGit

    existing = root
    while not existing.exists():
        existing = existing.parent
    try:
        inside = SessionGit(existing).rev_parse("--is-inside-git-dir") == "true"
    except (GitCommandError, OSError):
        return
    if inside:
        raise InputError(
            "is inside a git repository's own folder (a bare repository or .git), not a working tree; "
            "clone the repository (`git clone`) and run `frames init` in the clone",
            Location(root),
        )


def init_workspace(root: Path) -> list[str]:
    """Create what is missing of a workspace at `root`; never touch what exists.

    Makes `root` itself, `frames.yaml` (the settings a team sets first, `TEAM_SETTINGS`, with their
    defaults and meaning as comments),
    `policies/`, `skills/`, `cases/`, a `.gitignore` line for `.frames/`, and a git repository
    when `root` is not inside one.

    Returns:
        What was created, as workspace-relative names ("git repository" for `git init`).

    Raises:
        ConfigError: an existing `frames.yaml` is invalid (it is left as it is).
        InputError: `root` exists and is not a folder, lies inside a bare repository or a `.git`
            folder, or inside another workspace (a `frames.yaml` in a parent folder of the same
            repository); nothing is written.
    """
    if root.exists() and not root.is_dir():
        raise InputError("exists and is not a folder", Location(root))
    refuse_git_dir(root)
    refuse_nested(root)
    created: list[str] = []
    if not root.exists():
        root.mkdir(parents=True)
        created.append(".")
    config = root / CONFIG_FILE
    if config.exists():
        load_config(root)
    else:
        atomic_write_text(config, render_config(only=TEAM_SETTINGS))
        created.append(CONFIG_FILE)
    for folder in ("policies", "skills", "cases"):
        if not (root / folder).is_dir():
            (root / folder).mkdir()
            created.append(f"{folder}/")
    ignore = root / ".gitignore"
    old = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    if GITIGNORE_LINE not in {line.strip() for line in old.splitlines()}:
        sep = "" if not old or old.endswith("\n") else "\n"
        atomic_write_text(ignore, f"{old}{sep}{GITIGNORE_LINE}\n")
        created.append(".gitignore" if not old else ".gitignore (.frames/ line)")
    from frames_cli.gitstore.committable import is_git_worktree

    if not is_git_worktree(root):
        from frames_cli.gitstore.process import SessionRepo

        SessionRepo.init(root).close()
        created.append("git repository")
    return created
