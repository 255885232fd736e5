"""Options shared by every command and the one place where frames errors become exit codes."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from frames_cli.errors import FramesError

RepoOption = Annotated[
    Optional[Path],
    typer.Option("--repo", help="Workspace folder (default: the current folder).", show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]


def guarded(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a command so a FramesError prints `error: <message>` on stderr and exits with its code.

    Exit codes (errors.py): 0 ok, 1 run-time failure, 2 bad usage or input, 75 locked, 100 threshold.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except FramesError as exc:
            from frames_cli.commands.output import err_console

            err_console().print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
            raise typer.Exit(exc.exit_code) from None

    return wrapper
