"""Options shared by every command and the one place where frames errors become exit codes."""

from __future__ import annotations

import functools
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from frames_cli.errors import EXIT_RUNTIME, FramesError, InputError, Location

RepoOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help=(
            "The workspace, or any folder in it (default: the current folder): frames.yaml is looked for there and in "
            "its parents, up to the repository root."
        ),
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]
#: Commands that call models (`ModelClient(use_cache=not no_cache)`).
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Ask the models again instead of reusing cached answers.")
]
#: An output file option given as `-` means standard output.
STDOUT = Path("-")


def guarded(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a command so a FramesError prints `error: <message>` on stderr and exits with its code.

    An OSError that reaches here is an I/O failure at run time (disk full, a folder made read-only
    meanwhile): it prints `error: <filename>: <strerror>` and exits 1. Output paths the user names
    are checked before any work by `check_output_file`, which exits 2.

    Exit codes (errors.py): 0 ok, 1 run-time failure, 2 bad usage or input, 75 locked, 100 threshold.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except FramesError as exc:
            _fail(str(exc), exc.exit_code)
        except BrokenPipeError:
            # `frames review ... | head`: the reader has what it wanted. Quiet, as git is; stdout
            # is pointed at /dev/null so the interpreter's final flush cannot fail again.
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(0) from None
        except OSError as exc:
            _fail(f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else str(exc), EXIT_RUNTIME)

    return wrapper


def _fail(message: str, code: int) -> None:
    from rich.markup import escape

    from frames_cli.commands.output import err_console
    from frames_cli.sanitize import for_terminal

    # Escaped: a message quoting YAML (`name: [broken`) must not be read as rich markup, nor a
    # control character quoted from a file act on the terminal.
    err_console().print(f"[bold red]error:[/] {escape(for_terminal(message))}", markup=True, highlight=False)
    raise typer.Exit(code) from None


def check_output_file(path: Path | None, option: str) -> None:
    """Refuse, before any work is done, an output file path that can never be written.

    `None` (option not given) and `-` (standard output) pass. Missing parent folders are fine:
    `atomic_write_*` creates them, so the nearest existing ancestor is what must accept a file.
    The check creates an anonymous temporary file there and removes it, which catches read-only
    and pseudo file systems (`/proc`) that permission bits do not show, e.g. for root.

    Raises:
        InputError: `path` is a folder, lies under a file, or its folder does not accept files
            (exit 2; `path: <option> ...`).
    """
    if path is None or path == STDOUT:
        return
    if path.is_dir():
        raise InputError(f"{option} names a folder; give a file path", Location(path))
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise InputError(f"{option}: {folder} is a file, not a folder", Location(path))
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise InputError(f"{option}: cannot create files in {folder}: {exc.strerror}", Location(path)) from None


def check_stdout_users(users: dict[str, bool]) -> None:
    """Refuse two outputs on standard output, e.g. `--json` and `--markdown -`.

    Args:
        users: option as the user typed it (`"--markdown -"`) → whether it writes to stdout.

    Raises:
        InputError: more than one writes to stdout (exit 2).
    """
    named = [option for option, used in users.items() if used]
    if len(named) > 1:
        raise InputError(f"{' and '.join(named)} cannot share standard output; choose one")


def write_output(path: Path, text: str) -> None:
    """Write `text` to the file `path` atomically, or print it when `path` is `-` (STDOUT).

    Raises:
        OSError: the file could not be written (it is then unchanged).
    """
    if path == STDOUT:
        from frames_cli.commands.output import shown

        # As the file would be written: credentials redacted (and nothing a terminal obeys).
        typer.echo(shown(text), nl=not text.endswith("\n"))
        return
    from frames_cli.files.atomic import atomic_write_text

    atomic_write_text(path, text)
