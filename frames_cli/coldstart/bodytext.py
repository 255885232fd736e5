"""A policy piece as a skill body reads it: whole paragraphs, no links into a page it is no longer part of.

The reading view (`PolicyDocument.view`) keeps the file's line breaks, so a paragraph wrapped at
80 columns stays wrapped, and where link markup or a template tag was left out a line is cut short
("Yes: Get travel" / "authorization"). A body has no line numbers to keep (back-links hash the
file's own lines), so here each paragraph and list item is one line again, as Markdown renders it
anyway. Links to a place in the same page point nowhere in a skill: one inside a sentence reads
as its text, and a line that is only such a link (a table of contents, "[Having Trouble](#...)")
is left out, as the view leaves out "Next" navigation. A list item left empty by a removed
template tag goes too.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from frames_cli.coldstart.links import IN_PAGE_LINE, in_page_as_text
from frames_cli.formats.policy import MARKDOWN_SUFFIXES, PolicyDocument

# Lines that open a block of their own and never continue a paragraph.
_BLOCK_START = re.compile(
    r"^\s*(?:[-*+]\s|\d+[.)]\s|#{1,6}(?:\s|$)|>|\||```|~~~|<|[-*_=]{3,}\s*$|[-*+]\s*$|\d+[.)]\s*$)"
)
_EMPTY_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*$")
# A hard line break in Markdown: two spaces or a backslash at the end.
_HARD_BREAK = re.compile(r"(?:  |\\)$")
_HEADINGISH = re.compile(r"^\s*(?:#{1,6}(?:\s|$)|\||```|~~~|<|[-*_=]{3,}\s*$)")


def _reflow(lines: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """Lines (text, inside fenced code) with each paragraph's and list item's wrapped lines
    joined into one; fenced code, tables, headings and hard breaks kept as they are."""
    out: list[tuple[str, bool]] = []
    joinable = False
    for line, fenced in lines:
        if fenced or not line.strip():
            out.append((line if fenced else "", fenced))
            joinable = False
            continue
        if joinable and not _BLOCK_START.match(line):
            out[-1] = (f"{out[-1][0].rstrip()} {line.strip()}", False)
        else:
            out.append((line.rstrip(), False))
        joinable = not _HEADINGISH.match(line) and not _HARD_BREAK.search(line)
    return out


def piece_text(doc: PolicyDocument, start: int, end: int) -> str:
    """Lines `start`..`end` of `doc` as a skill body shows them (see the module docstring):
    paragraphs on one line each, in-page links as their text, tables of contents and empty list
    items left out, no run of blank lines and none at either end. A plain-text document keeps its
    lines: there a line break is the author's, not a wrap Markdown would undo."""
    lines = [(doc.view[no - 1], no in doc.fenced) for no in range(start, end + 1)]
    if PurePosixPath(doc.file).suffix.lower() not in MARKDOWN_SUFFIXES:
        return "\n".join(line.rstrip() for line, _ in lines).strip("\n")
    flowed = _reflow(lines)
    out: list[str] = []
    for line, fenced in flowed:
        if not fenced:
            if line.strip() and (IN_PAGE_LINE.match(line) or _EMPTY_ITEM.match(line)):
                continue
            line = in_page_as_text(line)
        if fenced or line.strip() or (out and out[-1].strip()):
            out.append(line)
    return "\n".join(out).strip("\n")
