"""`frames init`: make a workspace in a new or existing folder; running it again changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from frames_cli.commands.common import JsonOption, guarded


def register(app: typer.Typer) -> None:
    """Add `frames init` to `app`."""

    @app.command("init", short_help="Make a workspace: frames.yaml, policies/, skills/, cases/.")
    @guarded
    def init(
        path: Annotated[
            Path | None,
            typer.Argument(help="Folder for the workspace (default: the current folder).", show_default=False),
        ] = None,
        json_out: JsonOption = False,
    ) -> None:
        """Make a workspace: frames.yaml (the settings a team sets first, commented; every
        setting is in docs/settings.md), policies/, skills/, cases/, .gitignore for .frames/, and
        `git init` where there is no repository. Running it twice changes nothing; inside another
        workspace it refuses. Exit 0, or 2 when an existing frames.yaml is invalid or PATH lies
        inside another workspace."""
        from frames_cli.commands.output import console, emit_json
        from frames_cli.workspace.config import CONFIG_FILE, SETTINGS_REFERENCE
        from frames_cli.workspace.create import init_workspace

        root = (path or Path.cwd()).resolve()
        created = init_workspace(root)
        if json_out:
            emit_json({"root": str(root), "created": created})
        elif created:
            console().print(f"Workspace at {root}: created " + ", ".join(created))
            if CONFIG_FILE in created:
                console().print(
                    f"{CONFIG_FILE} holds the settings a team sets first (set the models there); "
                    f"every setting is described in {SETTINGS_REFERENCE} of the frames repository."
                )
        else:
            console().print(f"Workspace at {root} is complete; nothing changed.")
