"""The review table of an ingest: each row's answer key beside the
comment it came from, for a person to check before it counts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from frames_cli.evaluation.checks import clip
from frames_cli.ingest.keys.answer_key import NONE_REASONS

if TYPE_CHECKING:
    from rich.table import Table

    from frames_cli.ingest.rows.account import Account, RowFate

#: Characters of a comment shown in the table (the whole comment is in `--json` and the case's notes).
COMMENT_SHOWN = 400


def key_cell(row: RowFate) -> str:
    """The answer-key cell of one row: each requirement on its own line, or why there is none and
    what the row became; then the `review: needed` reason when a person must confirm."""
    key = row.key
    if key is None:
        return ""
    if key.requirements:
        lines = [f"• {r}" for r in key.requirements]
    else:
        became = {"prior": "a prior", "case": "a case graded by the whole comment"}.get(row.fate, row.fate)
        lines = [f"no key: {NONE_REASONS.get(key.none, key.none)} → {became}"]
    lines += [f"must not claim: “{c}”" for c in key.rejected]
    if key.by != "rules":
        lines.append(f"(read by {key.by})")
    if row.review:
        lines.append(f"review: needed — {row.review}")
    return "\n".join(lines)


def key_table(account: Account) -> Table:
    """A rich table with one line per row that had a comment: row (location, own id, fate), the
    comment (cut at `COMMENT_SHOWN` characters with "…") and its answer key (`key_cell`)."""
    from rich import box
    from rich.table import Table

    table = Table(title="answer keys", box=box.SIMPLE, show_lines=True, expand=True)
    table.add_column("row", ratio=1, overflow="fold")
    table.add_column("comment", ratio=3)
    table.add_column("answer key", ratio=3)
    for row in account.rows:
        if row.key is None:
            continue
        own = f" [{row.own_id}]" if row.own_id else ""
        table.add_row(
            f"{row.location}{own}\n{row.fate}", clip(" ".join((row.comment or "").split()), COMMENT_SHOWN),
            key_cell(row),
        )
    return table
