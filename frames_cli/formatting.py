"""Text formatting shared by every report: percentages, tokens, USD, plurals, sample sizes, safe Markdown."""

from __future__ import annotations

import re


def pct(rate: float | None) -> str:
    """A 0..1 rate as "62.5%"; "—" for None."""
    return "—" if rate is None else f"{100 * rate:.1f}%"


def tokens(value: float | None) -> str:
    """Mean tokens per case, rounded, with thousands separators; "—" for None."""
    return "—" if value is None else f"{value:,.0f}"


def usd(value: float | None) -> str:
    """USD with four decimals ("$0.0123"); "—" when the price is unknown."""
    return "—" if value is None else f"${value:.4f}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """ "1 case", "2 cases", "0 cases" (`many` for irregular plurals: plural(2, "candidate is", "candidates are"))."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def sample_size(n: int | None, k: int = 1) -> str:
    """The sample size a rate is over, for beside the rate: "n=50", "n=50, k=3" (k samples per case);
    "" when n is unknown (runs recorded before frames kept case counts)."""
    if n is None:
        return ""
    return f"n={n:,}" + (f", k={k}" if k > 1 else "")


def with_n(text: str, n: int | None, k: int = 1) -> str:
    """`text` followed by its sample size in parentheses ("pass rate (n=50)"); `text` alone when n is unknown."""
    size = sample_size(n, k)
    return f"{text} ({size})" if size else text


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
