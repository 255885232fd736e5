"""The `frames` typer app. Each command lives in its own module with a `register(app)` function,
in the sub-package of its group in `frames --help` (setup/, cases/, evolve/, review/).

Command modules import only light libraries at module level, so `frames --help` stays instant;
litellm, GitPython and the evolution code are imported inside the command bodies.
"""

from __future__ import annotations

import importlib
import warnings
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, TextIO

import typer
import typer.core

from frames_cli.errors import FramesWarning

#: The commands' modules, in the order `frames --help` lists them: setting up, feeding cases,
#: evaluating, evolving, reviewing.
COMMANDS = (
    "setup.init", "setup.coldstart", "setup.adopt", "cases.ingest", "setup.validate", "setup.status",
    "setup.check_models", "evolve.catalog", "evolve.eval", "evolve.evolve", "review.front", "review.review",
    "review.report", "review.promote", "review.publish", "evolve.runs",
)

app = typer.Typer(
    name="frames",
    help="Evolve a git repository of Markdown skills for policy-bound LLM agents.\n\n"
    "Exit codes: 0 ok, 1 run-time failure, 2 bad usage or input, 75 another run holds the lock or "
    "a provider batch (llm.batch) is still running: run it again later, "
    "100 a gate or threshold failed, 130/143 frames evolve stopped by SIGINT/SIGTERM (resumable). "
    "frames COMMAND --help shows a command's options; the guide is README.md, the reference docs/.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help, not rich's: rich's option table cut long option names at 80 columns
    # (`--min-category-pass-r…`) and its Markdown reader ate placeholders (`.frames/runs/<run>/`).
    rich_markup_mode=None,
)

for _module in COMMANDS:
    importlib.import_module(f"frames_cli.commands.{_module}").register(app)


def frames_version() -> str:
    """The installed frames-cli version ("0.1.0"), or "unknown" when run from an uninstalled checkout."""
    try:
        return version("frames-cli")
    except PackageNotFoundError:
        return "unknown"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"frames {frames_version()}")
        raise typer.Exit(0)


@app.callback()
def _root(
    _version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the frames version and exit."),
    ] = False,
) -> None:
    """Evolve a git repository of Markdown skills for policy-bound LLM agents."""


_value_label = typer.core.TyperOption.display_type_rich


def _flag_label(self: typer.core.TyperOption, ctx: typer.core._click.Context) -> str | None:
    # typer 0.29's rich help labels every flag `<bool>`, as if `--strict true` were how to use it
    # (click refuses it); a flag takes no value, so it gets no label. Options with values keep theirs.
    return None if self.is_flag else _value_label(self, ctx)


typer.core.TyperOption.display_type_rich = _flag_label  # type: ignore[method-assign]


_python_show_warning = warnings.showwarning


def show_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """`warnings.showwarning` of the command line: frames' own warnings (`errors.FramesWarning`) as
    one line `warning: <message>` on stderr; any other as Python shows it."""
    if not issubclass(category, FramesWarning):
        _python_show_warning(message, category, filename, lineno, file, line)
        return
    from frames_cli.commands.output import err_console
    from frames_cli.sanitize import for_terminal

    err_console().print(f"warning: {for_terminal(str(message))}", markup=False, highlight=False, soft_wrap=True)


def main() -> None:
    """Console-script entry point."""
    warnings.showwarning = show_warning
    app()
