"""Every `--help` at 80 columns: whole option names, placeholders intact, one line per command.

Invariants:
1. `frames --help` fits 40 lines at 80 columns and gives each command exactly one line, not cut.
2. In every command's help, every option's names appear whole (never `--min-category-pass-r…`).
3. Every help text (the command's and each option's) reaches the screen whole: no placeholder
   (`<run>`, `[x]`, `skills/<name>/`) eaten by a markup reader; only the line breaks differ.
4. No line is wider than 80 columns.
"""

from __future__ import annotations

import re

import click
import pytest
import typer
from typer.testing import CliRunner

from frames_cli.commands.app import app

runner = CliRunner()
ROOT = typer.main.get_command(app)


def commands() -> list[tuple[list[str], click.Command]]:
    found: list[tuple[list[str], click.Command]] = []

    def walk(path: list[str], command: click.Command) -> None:
        found.append((path, command))
        for name, sub in getattr(command, "commands", {}).items():
            walk([*path, name], sub)

    walk([], ROOT)
    return found


def help_at_80(path: list[str]) -> str:
    done = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    return done.stdout


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_top_level_help_is_short_with_one_line_per_command() -> None:
    text = help_at_80([])
    lines = text.splitlines()
    assert len(lines) <= 40
    listed = lines[lines.index("Commands:") + 1 :]
    assert sorted(line.split()[0] for line in listed) == sorted(ROOT.commands)
    assert all(not line.rstrip().endswith("...") for line in listed), listed
    for name, command in ROOT.commands.items():
        assert command.short_help and len(command.short_help) <= 62, name


@pytest.mark.parametrize(("path", "command"), commands(), ids=lambda x: " ".join(x) if isinstance(x, list) else "")
def test_help_keeps_option_names_and_placeholders_at_80_columns(path: list[str], command: click.Command) -> None:
    text = help_at_80(path)
    assert max(len(line) for line in text.splitlines()) <= 80
    flat = squeeze(text)
    assert squeeze(command.help or "") in flat
    for param in command.params:
        for name in (*param.opts, *param.secondary_opts):
            if name.startswith("-"):
                assert re.search(rf"(^|[\s,]){re.escape(name)}([\s,=]|$)", text, re.M), (path, name)
        helptext = getattr(param, "help", None)
        if helptext:
            assert squeeze(helptext) in flat, (path, param.name)


def test_report_help_shows_the_default_path_whole() -> None:
    assert ".frames/runs/<run>/report.html" in squeeze(help_at_80(["report"]))
