"""Skills from chunks: back-links, the description, the verbatim body and the generation stamp."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from frames_cli.coldstart.naming import strip_numbering
from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.skill import GENERATED_KEY, MAX_DESCRIPTION, BackLink, Skill

#: metadata key saying how coldstart made the body: "verbatim" or "model <model string>".
MODE_KEY = "frames-coldstart"
VERBATIM = "verbatim"
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST_START = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)|[*_`]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
# How much of the opening sentence goes into a description (characters).
_LEAD_CHARS = 240


def backlinks(chunk: Chunk) -> list[BackLink]:
    """One back-link per piece of `chunk`, with the sha256 of its current text."""
    return [
        BackLink(chunk.doc.file, " > ".join(p.heading), p.start, p.end, chunk.doc.sha256(p.start, p.end))
        for p in chunk.pieces
    ]


def _clean(text: str) -> str:
    """One line safe for a description: no markup, no `<` `>` (spec lint), no `---` (validator)."""
    text = " ".join(text.split()).replace("<", "‹").replace(">", "›")
    while "---" in text:
        text = text.replace("---", "—")
    return text


def _lead(chunk: Chunk) -> str:
    """The first sentence of the chunk's first paragraph of text (headings, setext underlines and
    Markdown markup left out; a paragraph's wrapped lines are joined first)."""
    lines = [ln for p in chunk.pieces for ln in chunk.doc.lines[p.start - 1 : p.end]] + [""]
    paragraph: list[str] = []
    for i, line in enumerate(lines[:-1]):
        heading = line.lstrip().startswith("#") or _SETEXT.match(lines[i + 1]) or (_SETEXT.match(line) and not paragraph)
        if not line.strip() or heading:
            if paragraph:
                break
            continue
        paragraph.append(_MARKUP.sub("", line))
        if _LIST_START.match(lines[i + 1]):
            break
    plain = _clean(" ".join(paragraph))
    if not plain:
        return ""
    sentence = _SENTENCE_END.split(plain, 1)[0]
    if len(sentence) > _LEAD_CHARS:
        sentence = sentence[:_LEAD_CHARS].rsplit(" ", 1)[0] + " …"
    if sentence.endswith(":"):
        # "An applicant must:" introduces a list the description cannot hold.
        return sentence[:-1].rstrip() + " …"
    return sentence if sentence.endswith((".", "!", "?", "…")) else sentence + "."


def _topics(chunk: Chunk) -> list[str]:
    """Distinct section titles the chunk covers, the document title left out."""
    topics: list[str] = []
    for piece in chunk.pieces:
        title = strip_numbering(piece.heading[-1]) if len(piece.heading) > 1 or chunk.doc.root.level == 0 and piece.heading else ""
        if title and title not in topics:
            topics.append(title)
    return topics


def describe(chunk: Chunk) -> str:
    """The description: what the skill covers (with its opening rule) and when to use it."""
    title = _clean(chunk.doc.title)
    # A title heading names the policy ("the Airline Agent Policy"); a file name does not.
    source = f"the {title}" if chunk.doc.root.level else f"the {title} policy"
    part = f" (part {chunk.part} of {chunk.parts})" if chunk.part else ""
    lead = _lead(chunk)
    if chunk.kind == "general":
        text = f"General rules of {source}{part} that apply to every task: {lead} Use for any task under this policy."
    else:
        topics = [_clean(t) for t in _topics(chunk)] or [title]
        subject = topics[0] if len(topics) == 1 else f"{topics[0]} (with {', '.join(topics[1:])})"
        when = ", ".join(t.lower() for t in topics)
        text = f"{subject}{part}, from {source}: {lead} Use when a task involves {when}."
    if len(text) > MAX_DESCRIPTION:
        text = text[: MAX_DESCRIPTION - 1].rsplit(" ", 1)[0] + "…"
    return text


def verbatim_body(chunk: Chunk) -> str:
    """The policy text of the chunk, piece after piece, unchanged; a later part of a split section
    opens with a heading that says which section it continues."""
    blocks = [chunk.text(p) for p in chunk.pieces]
    if chunk.part > 1:
        level = "#" * min(max(len(chunk.heading), 1), 6)
        blocks.insert(0, f"{level} {chunk.heading[-1] if chunk.heading else chunk.doc.title} (part {chunk.part} of {chunk.parts})")
    return "\n\n".join(blocks) + "\n"


def make_skill(name: str, chunk: Chunk, body: str, description: str, mode: str) -> Skill:
    """A new skill for `chunk` with its back-links, tags, mode and generation stamp.

    Args:
        body, description: the text to use (verbatim or a model's rewrite).
        mode: `VERBATIM` or "model <model string>", stored under `frames-coldstart`.
    """
    skill = Skill(name=name, description=description, body=body)
    skill.backlinks = backlinks(chunk)
    skill.tags = [PurePosixPath(chunk.doc.file).stem] + (["general-rules"] if chunk.kind == "general" else [])
    skill.metadata[MODE_KEY] = mode
    skill.metadata[GENERATED_KEY] = skill.content_sha256()
    return skill
