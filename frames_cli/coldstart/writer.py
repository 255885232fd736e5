"""Skills from chunks: back-links, the description, the verbatim body and the generation stamp."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.skill import GENERATED_KEY, MAX_DESCRIPTION, BackLink, Skill

#: metadata key saying how coldstart made the body: "verbatim" or "model <model string>".
MODE_KEY = "frames-coldstart"
VERBATIM = "verbatim"
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
    """The first sentence of the chunk's first non-heading line, without Markdown markup."""
    for piece in chunk.pieces:
        for line in chunk.doc.lines[piece.start - 1 : piece.end]:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            plain = _clean(_MARKUP.sub("", line))
            sentence = _SENTENCE_END.split(plain, 1)[0]
            if len(sentence) > _LEAD_CHARS:
                sentence = sentence[:_LEAD_CHARS].rsplit(" ", 1)[0] + " …"
            return sentence if sentence.endswith((".", "!", "?", "…", ":")) else sentence + "."
    return ""


def _topics(chunk: Chunk) -> list[str]:
    """Distinct section titles the chunk covers, the document title left out."""
    topics: list[str] = []
    for piece in chunk.pieces:
        title = piece.heading[-1] if len(piece.heading) > 1 or chunk.doc.root.level == 0 and piece.heading else ""
        if title and title not in topics:
            topics.append(title)
    return topics


def describe(chunk: Chunk) -> str:
    """The description: what the skill covers (with its opening rule) and when to use it."""
    title = _clean(chunk.doc.title)
    part = f" (part {chunk.part} of {chunk.parts})" if chunk.part else ""
    lead = _lead(chunk)
    if chunk.kind == "general":
        text = f"General rules of the {title}{part} that apply to every task: {lead} Use for any task under this policy."
    else:
        topics = [_clean(t) for t in _topics(chunk)] or [title]
        subject = topics[0] if len(topics) == 1 else f"{topics[0]} (with {', '.join(topics[1:])})"
        when = ", ".join(t.lower() for t in topics)
        text = f"{subject}{part}, from the {title}: {lead} Use when a task involves {when}."
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


def stamp(skill: Skill) -> Skill:
    """Re-record the generation hash after coldstart changed the text (returns `skill`)."""
    skill.metadata[GENERATED_KEY] = skill.content_sha256()
    return skill
