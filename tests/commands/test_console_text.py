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


def test_whatever_prints_shows_no_control_character_and_no_credential(capsys) -> None:
    """Issue 29: C1 controls (CSI, U+009B) and ESC reached the terminal through console prints that
    did not escape; an expected value holding a token was printed unredacted, though the report
    redacted it. Every console now shows text as the reports have it."""
    import json

    from frames_cli.commands.output import emit_json

    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    console().print(f"  case\x9b2J [x]: expected {token!r}, got '[REDACTED]'")
    err_console().print("warning: \x1b]0;pwned\x07 \u202e")
    emit_json({"expected": token, "id": "a\x9bb"})
    out, err = capsys.readouterr()
    assert "\x9b" not in out and "\\x9b2J" in out and token not in out and "[REDACTED]" in out
    assert "\x1b" not in err and "\x07" not in err and "\\x1b]0;pwned" in err and "\\u202e" in err
    assert json.loads(out.split("\n", 1)[1]) == {"expected": "[REDACTED]", "id": "a\x9bb"}
