"""Skills from chunks: back-links, tags, the verbatim body and the generation stamp; and the checks a
skill passes before coldstart writes it (`check_writable`: within the size limit, no credential, valid).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from frames_cli.coldstart.bodytext import piece_text
from frames_cli.coldstart.describe import general_rules, is_reference
from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.markup import plain
from frames_cli.errors import InputError, Location
from frames_cli.formats.skill import GENERATED_KEY, SKILL_FILE, BackLink, Skill
from frames_cli.formats.skill_file import MAX_SKILL_BYTES, render_skill
from frames_cli.workspace.layout import Workspace

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


#: The tags coldstart gives a section by its kind; the agent acts on them (`executor.catalog`).
KIND_TAGS = ("general-rules", "reference")


def tags(chunk: Chunk) -> list[str]:
    """The policy file's name, then `general-rules` (a preamble that states rules for the sections
    after it, `describe.general_rules`) or `reference` (definitions, scope, roles, ...: read for a
    term, not followed as a procedure)."""
    kind = KIND_TAGS[0] if general_rules(chunk) else KIND_TAGS[1] if is_reference(chunk) else ""
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


def _refuse_secrets(ws: Workspace, skills: list[Skill], chunks: dict[str, Chunk]) -> None:
    """Refuse, before anything is written, a skill whose text holds a credential (`secretscan`).

    Raises:
        InputError: at the skill's SKILL.md and line, naming the policy file it was cut from (exit 2).
    """
    from frames_cli.secretscan import find_secrets

    for skill in skills:
        text = render_skill(skill)
        hits = find_secrets(text)
        if hits:
            source = chunks[skill.name].doc.file if skill.name in chunks else "its policy"
            raise InputError(
                f"would hold a credential ({hits[0].kind}) copied from {source}: remove it there; coldstart commits "
                "no secret",
                Location(ws.relative(ws.skills_dir / skill.name / SKILL_FILE), hits[0].line),
            )


def _refuse_invalid(ws: Workspace, skills: list[Skill], chunks: dict[str, Chunk]) -> None:
    """Refuse, before anything is written, a skill `frames validate` would refuse: coldstart never
    commits what its own validate rejects (a verbatim policy text holding a front-matter block, or a
    protected-region marker outside code).

    Raises:
        InputError: at the policy file and the chunk's first line, quoting validate's error (exit 2).
    """
    from frames_cli.formats.skill_checks import skill_problems

    for skill in skills:
        errors = [p for p in skill_problems(skill, folder=skill.name) if p.severity == "error"]
        if errors and skill.name in chunks:
            chunk = chunks[skill.name]
            raise InputError(
                f"this text would make {ws.relative(ws.skills_dir / skill.name / SKILL_FILE)}, which "
                f"`frames validate` refuses: {errors[0].message}; change the policy text (nothing was written)",
                Location(chunk.doc.file, chunk.pieces[0].start),
            )


def _refuse_too_big(skills: list[Skill], chunks: dict[str, Chunk]) -> None:
    """Refuse, before anything is written, a skill its own reader would refuse (over
    `MAX_SKILL_BYTES`): one block so long that no cut can shrink it, such as a 960 KB one-line
    policy. Writing it would make every later `frames` command stop at that file.

    Raises:
        InputError: at the policy file and the chunk's first line (exit 2).
    """
    for skill in skills:
        size = len(render_skill(skill).encode("utf-8"))
        if size > MAX_SKILL_BYTES and skill.name in chunks:
            chunk = chunks[skill.name]
            raise InputError(
                f"this text would make skill {skill.name} {size:,} bytes, over the {MAX_SKILL_BYTES:,}-byte limit of "
                "a skill file, and it is one paragraph, list item or table that cannot be cut: split it into "
                "paragraphs or under headings",
                Location(chunk.doc.file, chunk.pieces[0].start),
            )


def check_writable(ws: Workspace, skills: list[Skill], chunks: dict[str, Chunk]) -> None:
    """Refuse, before anything is written, a skill no reader could take (`_refuse_too_big`), one holding a
    credential (`_refuse_secrets`) or one `frames validate` refuses (`_refuse_invalid`); `chunks` maps each
    skill's name to the chunk it was cut from.

    Raises:
        InputError: the first refusal, at the skill's or the policy file's line (exit 2).
    """
    _refuse_too_big(skills, chunks)
    _refuse_secrets(ws, skills, chunks)
    _refuse_invalid(ws, skills, chunks)
