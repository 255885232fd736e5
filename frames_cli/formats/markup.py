"""Markup in policy files that is not policy text: front matter, template tags, HTML comments, and
the plain reading of inline Markdown (links as their text) for names and descriptions.

Everything here maps lines to lines of the same count, so a line number of the cleaned text is the
line number of the file (what `grep -n` and editors show) and back-links keep hashing the file's
own lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

_FRONT_OPEN = re.compile(r"^---[ \t]*$")
_FRONT_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
# Liquid / Jinja tags and expressions, Jinja comments and HTML comments, possibly over several lines.
_TEMPLATE = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}|<!--.*?-->", re.DOTALL)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_HTML_HEADING = re.compile(r"^\s*<h([1-6])\b[^>]*>(.*?)</h\1>\s*$", re.IGNORECASE)
# A link whose target was only a template tag (`[text]({% page "/x" %})`) is left as `[text]()`.
_EMPTY_LINK = re.compile(r"\[([^\]\[]*)\]\([ \t]*\)")
# Site navigation ("[Next to Booking travel >](...)", "[Jump to Step 3: What to Consider While
# Traveling](...)") standing alone is not policy; its text may wrap over lines of its own.
_NAVIGATION = re.compile(
    r"^[ \t]*\[\s*(?:next|previous|prev|back|jump to|skip to|return to|"
    r"go to)\b[^\]\n]*(?:\n[^\]\n]+)*\]\([^)\n]*\)(?:[ \t]|<br\s*/?>)*$",
    re.IGNORECASE | re.MULTILINE,
)

# A link whose target is a Jekyll/Liquid page tag: `]({% page "/a/b/#c" %})`, `{% link x.md %}`.
_PAGE_TARGET = re.compile(r"\]\(\s*\{%-?\s*(?:page|link|post_url)\s+[\"']?([^\"'%\s]+)[\"']?\s*-?%\}\s*\)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)|\[([^\]]+)\]\[[^\]]*\]|<(https?://[^>]+|mailto:[^>]+)>")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_EMPHASIS = re.compile(r"(?<![A-Za-z0-9])[*_]{1,3}|[*_]{1,3}(?![A-Za-z0-9])|`+|\\(?=[^A-Za-z0-9\s])")
_BLOCK_MARK = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+\[[ xX]\]\s+|[-*+]\s+|\d+[.)]\s+)")


@dataclass(frozen=True)
class FrontMatter:
    """A YAML front matter block at the top of a document.

    Attributes:
        end: its last line (the closing fence), 1-based.
        data: the parsed mapping (title, subtitle, ...), as YAML gave it.
    """

    end: int
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """The `title` key as plain text ("" when absent or not a string)."""
        value = self.data.get("title")
        return plain(str(value)) if isinstance(value, (str, int, float)) else ""


def front_matter(lines: list[str]) -> FrontMatter | None:
    """The front matter of a document: `---` on line 1, a YAML mapping, `---` or `...`; None when
    the document has none (a `---` rule over ordinary text is not front matter: it is no mapping)."""
    if not lines or not _FRONT_OPEN.match(lines[0]):
        return None
    for i in range(1, len(lines)):
        if _FRONT_CLOSE.match(lines[i]):
            try:
                data = yaml.safe_load("\n".join(lines[1:i]))
            except yaml.YAMLError:
                return None
            return FrontMatter(i + 1, data) if isinstance(data, dict) else None
    return None


def _blank_keeping_lines(match: re.Match[str]) -> str:
    return "\n" * match.group(0).count("\n")


def reading_view(lines: list[str], skip: int = 0, keep: frozenset[int] = frozenset()) -> list[str]:
    """The lines as a reader sees them, one for one: the first `skip` lines (front matter) blank;
    template tags, HTML comments and `<br>` removed; a link to a template target read as its text;
    navigation-only lines blank; `<hN>` headings as Markdown headings, also when written over
    several lines (the heading on its first line, the others blank). Lines in `keep` (1-based:
    fenced code) are left as written."""
    text = "\n".join([""] * skip + lines[skip:])
    text = _TEMPLATE.sub(_blank_keeping_lines, text)

    def navigation(match: re.Match[str]) -> str:
        first = text.count("\n", 0, match.start()) + 1
        inside = range(first, first + match.group(0).count("\n") + 1)
        return match.group(0) if any(no in keep for no in inside) else _blank_keeping_lines(match)

    text = _EMPTY_LINK.sub(r"\1", _NAVIGATION.sub(navigation, text))
    out = _join_html_headings(text.split("\n"), keep)
    for i, line in enumerate(out):
        if i + 1 in keep:
            out[i] = lines[i]
            continue
        if i < skip or not line:
            continue
        line = _BREAK.sub(" ", line)
        heading = _HTML_HEADING.match(line)
        if heading:
            line = f"{'#' * int(heading.group(1))} {plain(heading.group(2))}"
        out[i] = line.rstrip() if line.strip() else ""
    return out


#: Lines an `<hN>` heading may span (USWDS accordions put a `<button>` on lines of its own).
_HEADING_SPAN = 8
_HTML_HEADING_OPEN = re.compile(r"^\s*<h([1-6])\b[^>]*>", re.IGNORECASE)


def _join_html_headings(lines: list[str], keep: frozenset[int]) -> list[str]:
    """`lines` with each `<hN>` heading written over several lines (`<h3 class="usa-accordion__heading">`,
    its `<button>` and text on the next lines, `</h3>`) put on its first line and the others blank,
    so it is a heading like a one-line `<hN>`; line numbers stay as they were."""
    out = list(lines)
    for i, line in enumerate(out):
        opened = _HTML_HEADING_OPEN.match(line)
        if not opened or _HTML_HEADING.match(line) or i + 1 in keep:
            continue
        close = re.compile(rf"</h{opened.group(1)}>\s*$", re.IGNORECASE)
        end = next((j for j in range(i + 1, min(i + _HEADING_SPAN, len(out))) if close.search(out[j])), None)
        if end is None or any(j + 1 in keep for j in range(i, end + 1)):
            continue
        joined = " ".join(part.strip() for part in out[i : end + 1])
        if _HTML_HEADING.match(joined):
            out[i : end + 1] = [joined] + [""] * (end - i)
    return out


def keep_page_links(lines: list[str]) -> list[str]:
    """`lines` with each link to a template page tag pointing at the page it names
    (`[FAQ]({% page "/travel-guide-faq/#book-lodging" %})` → `[FAQ](/travel-guide-faq/#book-lodging)`),
    line for line, so the reading view keeps such a link instead of reading it as its text."""
    return [_PAGE_TARGET.sub(lambda m: f"]({m.group(1)})", line) if "{%" in line else line for line in lines]


def plain(text: str, *, markers: bool = True) -> str:
    """`text` as words: links as their text, images, HTML tags, emphasis and escapes dropped,
    whitespace collapsed (for names, titles and descriptions); with `markers`, a leading list,
    quote or heading marker too (a heading's own text keeps its "1." numbering)."""
    text = _TEMPLATE.sub(" ", text)
    text = _IMAGE.sub(" ", text)
    text = _LINK.sub(lambda m: m.group(1) if m.group(1) is not None else (m.group(2) or m.group(3) or ""), text)
    text = _TAG.sub(" ", text)
    if markers:
        text = _BLOCK_MARK.sub("", text)
    text = _EMPHASIS.sub("", text)
    return " ".join(text.split())
