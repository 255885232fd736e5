"""`frames review` at 80 columns: tables split by columns, never a wrapped cell; diff lines keep their marker.

Invariants:
1. No line is wider than the terminal.
2. Each table row is one line: a category's label and its rates are on the same line, and the
   columns that do not fit go to a second table that repeats the labels.
3. Every piece of a folded `+` (or `-`) line starts with `+` (`-`), and joined they are the line.
4. On a pipe (no terminal, no COLUMNS) a diff line is never folded: each line of the diff is one line.
"""

from __future__ import annotations

import re

from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.commands.review.markdown_view import fold_diff, table_parts


LONG_ADD = "+" + " ".join(["Always confirm the booking id and the passenger's name before cancelling"] * 3)


def test_fold_diff_keeps_each_pieces_marker() -> None:
    lines = [" context", LONG_ADD, "-" + "x" * 200, "@@ -1,3 +1,4 @@ " + "heading " * 20]
    folded = fold_diff(lines, 80)
    assert all(len(line) <= 80 for line in folded)
    added = [line for line in folded if line.startswith("+")]
    assert len(added) > 1 and "".join(piece[1:] for piece in added) == LONG_ADD[1:]
    removed = [line for line in folded if line.startswith("-")]
    assert "".join(piece[1:] for piece in removed) == "x" * 200


def test_table_parts_keep_the_label_column_and_fit() -> None:
    rows = [["category", "S0", "parent r1c1", "r2c1", "floor (1−ε)·S0", "gate", "cases worse / better of n (p)"],
            ["compensation (n=6)", "33.3%", "100.0%", "100.0%", "31.7%", "pass", "0 / 4 of 6 (p 1)"]]
    parts = table_parts(rows, 80)
    assert len(parts) == 2 and all(part[0] == 0 for part in parts)
    assert sorted(c for part in parts for c in part[1:]) == list(range(1, 7))


def test_review_at_80_columns(world) -> None:
    done = CliRunner().invoke(app, ["review", "r2c1", "--repo", str(world.root)], env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    header = [i for i, line in enumerate(lines) if line.startswith("category ")]
    assert len(header) == 2  # the flips column did not fit beside the rates: a second table
    for i in header:
        label, value = lines[i + 2].split(None, 1)  # the label and its value on one line
        assert label == "cancel" and value.strip()
    assert re.match(r"^cancel\s+\d+\.\d%", lines[header[0] + 2])
    diff = lines[next(i for i, line in enumerate(lines) if line.startswith("diff --git")):]
    assert any(line.startswith("+") and not line.startswith("+++") for line in diff)


def test_review_on_a_pipe_keeps_each_diff_line_whole(world, monkeypatch) -> None:
    import io

    from rich.console import Console

    from frames_cli.commands.review.markdown_view import Whole, render_markdown

    monkeypatch.delenv("COLUMNS", raising=False)
    parts = render_markdown("```diff\n" + LONG_ADD + "\n```\n", Console(file=io.StringIO(), width=80))
    assert [str(p) for p in parts if isinstance(p, Whole)] == [LONG_ADD]
    done = CliRunner().invoke(app, ["review", "r2c1", "--repo", str(world.root)])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("diff --git"))
    diff = lines[start : next((i for i in range(start, len(lines)) if not lines[i]), len(lines))]
    assert max(len(line) for line in diff) > 80  # a line the terminal path would fold
    heads = ("diff --git", "index ", "--- ", "+++ ", "@@", "+", "-", " ", "new file", "deleted file")
    assert all(line.startswith(heads) for line in diff)
