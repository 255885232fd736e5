"""Text formatting shared by every report: percentages, tokens, USD, candidate labels, safe Markdown."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from frames_cli.evolution.records import Candidate


def pct(rate: float | None) -> str:
    """A 0..1 rate as "62.5%"; "—" for None."""
    return "—" if rate is None else f"{100 * rate:.1f}%"


def tokens(value: float | None) -> str:
    """Mean tokens per case, rounded, with thousands separators; "—" for None."""
    return "—" if value is None else f"{value:,.0f}"


def usd(value: float | None) -> str:
    """USD with four decimals ("$0.0123"); "—" when the price is unknown."""
    return "—" if value is None else f"${value:.4f}"


def label(cand: Candidate) -> str:
    """The candidate id, marked "(S0)" for the base (the candidate without a parent)."""
    return f"{cand.id} (S0)" if cand.parent_id is None else cand.id


def md_text(text: str) -> str:
    """`text` (from a person or a model) escaped for Markdown: shown as written, never as markup.

    Backslash escapes of ASCII punctuation are CommonMark's (spec 0.31, §2.4), which GitHub and
    rich's renderer follow; without them "approved by <ann>" lost "<ann>" as an HTML tag.
    """
    return re.sub(r"([\\`*_\[\]<>&#|~])", r"\\\1", text)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table (pipes in cells escaped)."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "|".join("---" for _ in header) + "|", *map(line, rows)])
