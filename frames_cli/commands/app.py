"""The `frames` typer app. Each command lives in its own module with a `register(app)` function.

Command modules import only light libraries at module level, so `frames --help` stays instant;
litellm, GitPython and the evolution code are imported inside the command bodies.
"""

from __future__ import annotations

import importlib

import typer

COMMANDS = ("init", "adopt", "coldstart", "ingest", "eval", "evolve", "front", "review", "promote", "validate", "status", "runs", "check-models")

app = typer.Typer(
    name="frames",
    help="Evolve a git repository of Markdown skills for policy-bound LLM agents. "
    "Exit codes: 0 ok, 1 run-time failure, 2 bad usage or input, 75 another run holds the lock, "
    "100 a gate or threshold failed, 130/143 `frames evolve` stopped by SIGINT/SIGTERM (resumable).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)

for _name in COMMANDS:
    importlib.import_module(f"frames_cli.commands.{_name.replace('-', '_')}").register(app)


def main() -> None:
    """Console-script entry point."""
    app()
