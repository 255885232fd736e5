"""Console output shows user text as written: no emoji codes (`:100:`), no rich markup (`[red]`)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.commands.output import console, err_console

runner = CliRunner()


def test_console_prints_emoji_codes_and_brackets_as_written(capsys) -> None:
    console().print("cases/a.yaml:100: error: verdict :smile: [red]x[/red]")
    err_console().print("cases/a.yaml:1234: warning: [bold]")
    out, err = capsys.readouterr()
    assert out == "cases/a.yaml:100: error: verdict :smile: [red]x[/red]\n"
    assert err == "cases/a.yaml:1234: warning: [bold]\n"


def test_validate_names_line_100_without_emoji(policy_workspace) -> None:
    root: Path = policy_workspace()
    lines = ["# padding"] * 99 + ["- id: [broken"]
    (root / "cases").mkdir(exist_ok=True)
    (root / "cases" / "c.yaml").write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["validate", "--repo", str(root)])
    text = result.stdout + result.stderr
    assert "c.yaml:100:" in text
    assert "💯" not in text
