"""`frames init`: make a workspace in a new or existing folder; running it again changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from frames_cli.commands.common import JsonOption, guarded

GITIGNORE_LINE = ".frames/"


def init_workspace(root: Path) -> list[str]:
    """Create what is missing of a workspace at `root`; never touch what exists.

    Makes `root` itself, `frames.yaml` (every setting with its default and meaning, commented),
    `policies/`, `skills/`, `cases/`, a `.gitignore` line for `.frames/`, and a git repository
    when `root` is not inside one.

    Returns:
        What was created, as workspace-relative names ("git repository" for `git init`).

    Raises:
        ConfigError: an existing `frames.yaml` is invalid (it is left as it is).
        InputError: `root` exists and is not a folder.
    """
    from frames_cli.errors import InputError, Location
    from frames_cli.workspace.atomic import atomic_write_text
    from frames_cli.workspace.config import CONFIG_FILE, load_config, render_config

    if root.exists() and not root.is_dir():
        raise InputError("exists and is not a folder", Location(root))
    created: list[str] = []
    if not root.exists():
        root.mkdir(parents=True)
        created.append(".")
    config = root / CONFIG_FILE
    if config.exists():
        load_config(root)
    else:
        atomic_write_text(config, render_config())
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
    from frames_cli.gitstore.worktree import is_git_worktree

    if not is_git_worktree(root):
        from git import Repo

        Repo.init(root).close()
        created.append("git repository")
    return created


def register(app: typer.Typer) -> None:
    """Add `frames init` to `app`."""

    @app.command("init")
    @guarded
    def init(
        path: Annotated[Optional[Path], typer.Argument(help="Folder for the workspace (default: the current folder).", show_default=False)] = None,
        json_out: JsonOption = False,
    ) -> None:
        """Make a workspace: frames.yaml (every setting, commented), policies/, skills/, cases/,
        .gitignore for .frames/, and `git init` where there is no repository. Running it twice
        changes nothing. Exit 0, or 2 when an existing frames.yaml is invalid."""
        from frames_cli.commands.output import console, emit_json

        root = (path or Path.cwd()).resolve()
        created = init_workspace(root)
        if json_out:
            emit_json({"root": str(root), "created": created})
        elif created:
            console().print(f"Workspace at {root}: created " + ", ".join(created))
        else:
            console().print(f"Workspace at {root} is complete; nothing changed.")
