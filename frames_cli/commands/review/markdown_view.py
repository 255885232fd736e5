"""Markdown for the terminal at any width: tables split by columns
instead of wrapped cell by cell, diffs folded with their `+`/`-` kept.

rich's Markdown renders a pipe table at 80 columns by wrapping every cell (a rate over two lines,
a header over four), and a fenced diff by folding long lines, so the rest of an added line
starts without its `+` and reads as context. `render_markdown` hands every other block to rich's
Markdown unchanged. On a pipe or in a file (no terminal and no `COLUMNS`) a diff line is not
folded at all: it is a `Whole` line, one line of the diff per line of output.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, RenderableType


class Whole(Text):
    """A line to print whole, never folded or cropped (`console.print(line, soft_wrap=True)`):
    a diff line when the output is not a terminal, where a folded `+` line would read as two."""

_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _blocks(text: str) -> Iterator[tuple[str, list[str]]]:
    """("markdown" | "table" | "diff", lines) blocks of `text`, in order."""
    lines = text.split("\n")
    i = 0
    plain: list[str] = []
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence and fence.group(2).strip() == "diff":
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(fence.group(1))), len(lines))
            if plain:
                yield "markdown", plain
                plain = []
            yield "diff", lines[i + 1 : end]
            i = end + 1
            continue
        if fence:  # another fenced block: kept whole for Markdown, its pipes are no table
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(fence.group(1))), len(lines) - 1)
            plain += lines[i : end + 1]
            i = end + 1
            continue
        if (
            line.startswith("|") and i + 1 < len(lines)
            and re.fullmatch(r"\|(\s*:?-{3,}:?\s*\|)+", lines[i + 1].strip())
        ):
            end = i + 2
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            if plain:
                yield "markdown", plain
                plain = []
            yield "table", [lines[i], *lines[i + 2 : end]]
            i = end
            continue
        plain.append(line)
        i += 1
    if plain:
        yield "markdown", plain


def _cells(row: str) -> list[str]:
    parts = _CELL_SPLIT.split(row.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]


def _cell_text(cell: str) -> RenderableType:
    bold = cell.startswith("**") and cell.endswith("**") and len(cell) > 4
    plain = cell[2:-2] if bold else cell
    return Text(plain.replace("**", "").replace("`", ""), style="bold" if bold else "")


def table_parts(rows: list[list[str]], width: int) -> list[list[int]]:
    """Column indexes of each table part: the first column (the row labels) in every part, the
    others in order, as many per part as fit `width` without wrapping (at least one).

    Args:
        rows: the header and the body rows, cells as printed.
        width: the console's width in columns.
    """
    from rich.cells import cell_len

    n = max(len(r) for r in rows)
    widths = [max(cell_len(r[c]) if c < len(r) else 0 for r in rows) for c in range(n)]
    gap = 2
    parts: list[list[int]] = []
    current, used = [0], widths[0] + gap
    for c in range(1, n):
        if len(current) > 1 and used + widths[c] + gap > width:
            parts.append(current)
            current, used = [0], widths[0] + gap
        current.append(c)
        used += widths[c] + gap
    parts.append(current)
    return parts


def _table(lines: list[str], width: int) -> list[RenderableType]:
    from rich import box
    from rich.table import Table

    rows = [_cells(line) for line in lines]
    out: list[RenderableType] = []
    for part in table_parts([[c.replace("**", "").replace("`", "") for c in r] for r in rows], width):
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for c in part:
            table.add_column(_cell_text(rows[0][c] if c < len(rows[0]) else ""), no_wrap=True, overflow="fold")
        for row in rows[1:]:
            table.add_row(*(_cell_text(row[c]) if c < len(row) else "" for c in part))
        out.append(table)
    return out


def fold_diff(lines: list[str], width: int) -> list[str]:
    """Diff lines cut to `width` columns between words where it can, each piece of a `+`, `-` or
    context line starting with that line's marker, so the rest of a long added line still reads
    as added; header lines (`diff --git`, `@@`) are cut alike without a marker.

    Args:
        lines: unified-diff lines.
        width: the console's width in columns (at least 10 is used).
    """
    import textwrap

    width = max(width, 10)
    out = []
    for line in lines:
        content = line.startswith(("+", "-", " ")) and not line.startswith(("+++ ", "--- "))
        marker, rest = (line[:1], line[1:]) if content else ("", line)
        if len(line) <= width:
            out.append(line)
            continue
        pieces = textwrap.wrap(
            rest, width - len(marker), break_on_hyphens=False, drop_whitespace=False, replace_whitespace=False
        ) or [rest]
        out.extend(marker + piece for piece in pieces)
    return out


def render_markdown(text: str, console: Console) -> list[RenderableType]:
    """The renderables that show `text` on `console`: rich Markdown, with its tables and diffs
    laid out by this module."""
    from rich.markdown import Markdown

    width = console.width
    # A terminal, or a width asked for: fold to it. A pipe or a file: every diff line whole.
    fold = console.is_terminal or bool(os.environ.get("COLUMNS"))
    out: list[RenderableType] = []
    for kind, lines in _blocks(text):
        if kind == "markdown":
            out.append(Markdown("\n".join(lines)))
        elif kind == "table":
            for table in _table(lines, width):
                out += [Text(""), table]
            out.append(Text(""))
        else:
            styles = {"+": "green", "-": "red", "@": "cyan"}
            for line in fold_diff(lines, width) if fold else lines:
                line_type = Text if fold else Whole
                out.append(line_type(line, style=styles.get(line[:1], ""), no_wrap=True, overflow="crop"))
            out.append(Text(""))
    return out
