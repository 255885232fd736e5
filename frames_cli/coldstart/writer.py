"""Skills from chunks: back-links, tags, the verbatim body and the generation stamp."""

from __future__ import annotations

from pathlib import PurePosixPath

from frames_cli.coldstart.bodytext import piece_text
from frames_cli.coldstart.describe import general_rules, is_reference
from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.markup import plain
from frames_cli.formats.skill import GENERATED_KEY, BackLink, Skill

#: metadata key saying how coldstart made the body: "verbatim" or "model <model string>".
MODE_KEY = "frames-coldstart"
VERBATIM = "verbatim"
#: metadata key of a verbatim description's sources: "heading", "sub-headings" and the policy
#: line of the sentence it quotes (`describe.Description.sources`), for a reviewer to check.
DESCRIBED_FROM_KEY = "frames-described-from"


def backlinks(chunk: Chunk) -> list[BackLink]:
    """One back-link per piece of `chunk`, with the sha256 of its current text."""
    return [
        BackLink(chunk.doc.file, " > ".join(p.heading), p.start, p.end, chunk.doc.sha256(p.start, p.end))
        for p in chunk.pieces
    ]


def verbatim_body(chunk: Chunk, continues: str | None = None) -> str:
    """The policy text of the chunk as a reader sees it (`bodytext.piece_text`: markup left out,
    paragraphs whole, in-page links as their text), piece after piece; a later part of a split
    section opens with a heading that says which section and which skill (`continues`) it continues."""
    blocks = [text for p in chunk.pieces if (text := piece_text(chunk.doc, p.start, p.end))]
    if chunk.part > 1:
        level = "#" * min(max(len(chunk.heading), 1), 6)
        title = plain(chunk.heading[-1] if chunk.heading else chunk.doc.title, markers=False)
        after = f", continues the skill {continues}" if continues else ""
        blocks.insert(0, f"{level} {title} (part {chunk.part} of {chunk.parts}{after})")
    return "\n\n".join(blocks) + "\n"


def tags(chunk: Chunk) -> list[str]:
    """The policy file's name, then `general-rules` (a preamble that states rules for the sections
    after it, `describe.general_rules`) or `reference` (definitions, scope, roles, ...: read for a
    term, not followed as a procedure)."""
    kind = "general-rules" if general_rules(chunk) else "reference" if is_reference(chunk) else ""
    return [PurePosixPath(chunk.doc.file).stem] + ([kind] if kind else [])


def make_skill(
    name: str, chunk: Chunk, body: str, description: str, mode: str, references: list[str] | None = None
) -> Skill:
    """A new skill for `chunk` with its back-links, tags, references, mode and generation stamp.

    Args:
        body, description: the text to use (verbatim or a model's rewrite).
        mode: `VERBATIM` or "model <model string>", stored under `frames-coldstart`.
        references: the skills its policy text links to (`links.references`), as `frames-references`.
    """
    skill = Skill(name=name, description=description, body=body)
    skill.backlinks = backlinks(chunk)
    skill.tags = tags(chunk)
    skill.references = list(references or [])
    skill.metadata[MODE_KEY] = mode
    skill.metadata[GENERATED_KEY] = skill.content_sha256()
    return skill
