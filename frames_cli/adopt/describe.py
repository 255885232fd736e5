"""Descriptions for adopted skills: one written from the body's text, one shortened to the spec's limit."""

from __future__ import annotations

import re

from frames_cli.formats.skill import MAX_DESCRIPTION

#: Longest description written from a body's text: the spec allows 1,024 characters, but the
#: catalog shows every description on every call, so a short one is cheaper.
TEXT_DESCRIPTION_CHARS = 300
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<title>.*?)\s*#*\s*$")
_MARKUP = re.compile(r"[*_`]+|!?\[([^\]]*)\]\([^)]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def clean(text: str) -> str:
    """One line safe in a description: whitespace collapsed, `<` `>` as ‹ › (spec lint), no `---`."""
    text = " ".join(text.split()).replace("<", "‹").replace(">", "›")
    while "---" in text:
        text = text.replace("---", "—")
    return text


def from_text(body: str, name: str) -> str:
    """A description from the body: its first heading and the first sentences of its first
    paragraph of prose (code blocks, tables and headings left out), at most TEXT_DESCRIPTION_CHARS
    characters; the name in words when the body has no text."""
    title, fenced = "", False
    paragraph: list[str] = []
    for line in body.splitlines() + [""]:
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        heading = _HEADING.match(line)
        if heading:
            title = title or _MARKUP.sub(r"\1", heading["title"])
            if paragraph:
                break
            continue
        if not line.strip() or line.lstrip().startswith(("|", "<!--")):
            if paragraph:
                break
            continue
        paragraph.append(_MARKUP.sub(r"\1", re.sub(r"^\s*([-*+]|\d+[.)])\s+", "", line)))
    lead = shorten(clean(" ".join(paragraph)), TEXT_DESCRIPTION_CHARS)
    title = clean(title)
    if title and lead and title.lower() not in lead.lower():
        text = shorten(f"{title}: {lead}", TEXT_DESCRIPTION_CHARS)
    else:
        text = lead or title or name.replace("-", " ").capitalize() + "."
    return text


def shorten(text: str, limit: int = MAX_DESCRIPTION) -> str:
    """`text` cut to at most `limit` characters: whole sentences when the first fits, else whole
    words and an ellipsis."""
    if len(text) <= limit:
        return text
    out = ""
    for sentence in _SENTENCE_END.split(text):
        if len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    if out:
        return out
    cut = text[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:") + "…"
