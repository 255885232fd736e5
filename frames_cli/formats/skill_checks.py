"""The spec rules and lints of one skill (name, description,
compatibility, markers, back-links, credentials, length)."""

from __future__ import annotations

import re
from pathlib import Path

from frames_cli.errors import Location
from frames_cli.formats.problems import Problem
from frames_cli.formats.protected import scan_protected
from frames_cli.formats.skill import (
    BACKLINKS_KEY, MAX_COMPATIBILITY, MAX_DESCRIPTION, MAX_NAME, NAME_RE, SKILL_FILE, SKILLS_DIR, Skill,
    decode_backlinks,
)
from frames_cli.sanitize import find_unsafe, unsafe_value
from frames_cli.secretscan import find_secrets

#: A body line a front-matter reader takes for a fence: `---`, trailing blanks allowed.
_FENCE = re.compile(r"^---[ \t]*$")
#: A line of a front-matter key the Agent Skills spec names, as YAML writes it.
_KEY_LINE = re.compile(r"^(?:name|description|license|compatibility|allowed-tools|metadata)[ \t]*:")
_CODE_FENCE = re.compile(r"^[ \t]{0,3}(?:```|~~~)")


def name_problems(name: str) -> list[str]:
    """Spec rules for a skill name; empty when `name` is valid."""
    if not name:
        return ["`name` must not be empty"]
    out = []
    if len(name) > MAX_NAME:
        out.append(f"name is {len(name)} characters; at most {MAX_NAME} are allowed")
    if not NAME_RE.match(name):
        out.append(
            f"name {name!r} must be lowercase letters, digits and single hyphens (no leading or trailing hyphen)"
        )
    return out


def key_line(skill: Skill, key: str) -> int:
    """File line of a front-matter key, when the skill was parsed from a file (else 1)."""
    return skill.source.key_lines.get(key, 1) if skill.source else 1


def body_line(skill: Skill, body_line: int) -> int | None:
    """File line of a body line, when the skill was parsed from a file."""
    return skill.source.body_line + body_line - 1 if skill.source else None


def skill_problems(skill: Skill, *, folder: str | None = None, max_body_lines: int = 500) -> list[Problem]:
    """All spec and lint problems of one skill (empty when it is fine).

    Errors: invalid name, name differing from `folder`, empty or too long description, `<`/`>` in
    the description, compatibility over 500 chars, malformed protected regions, malformed
    `frames-backlinks`, a credential in the body or description (`secretscan`), a control or
    invisible character in any front-matter value however written or in the body
    (`sanitize.unsafe_value`; a line break in a one-line value), a front-matter block in the body
    (`front_matter_in_body`). Warnings: body longer than `max_body_lines` lines.
    """
    path = skill.path or Path(f"{SKILLS_DIR}/{skill.name}/{SKILL_FILE}")
    out = _front_matter_problems(skill, path, folder)
    for line, msg in scan_protected(skill.body)[1]:
        out.append(Problem(Location(path, body_line(skill, line)), msg))
    try:
        decode_backlinks(skill.metadata.get(BACKLINKS_KEY, ""))
    except ValueError as exc:
        out.append(Problem(Location(path, key_line(skill, "metadata")), f"metadata `{BACKLINKS_KEY}`: {exc}"))
    for hit in find_secrets(skill.body):
        # Skills are committed, pushed and pasted into prompts: a credential must never be one's text.
        out.append(
            Problem(
                Location(path, body_line(skill, hit.line)),
                f"holds a credential ({hit.kind}); remove it, skills are committed and shown to models",
            )
        )
    at_description = Location(path, key_line(skill, "description"))
    for hit in find_secrets(skill.description):
        out.append(Problem(at_description, f"description holds a credential ({hit.kind}); remove it"))
    out += _unsafe_problems(skill, path)
    injected = front_matter_in_body(skill.body)
    if injected is not None:
        out.append(
            Problem(
                Location(path, body_line(skill, injected)),
                "the body opens or holds a `---` block of front-matter keys, which a reader of the file could take "
                "for the skill's front matter: a skill body is plain Markdown (write a thematic break as `***`)",
            )
        )
    n_lines = len(skill.body.splitlines())
    if n_lines > max_body_lines:
        out.append(
            Problem(
                Location(path, 1), f"body has {n_lines} lines; keep it under {max_body_lines} (cost is an objective)",
                "warning",
            )
        )
    return out


def _front_matter_problems(skill: Skill, path: Path, folder: str | None) -> list[Problem]:
    """The spec rules of the name (and its folder), the description and the compatibility."""
    at_name, at_description = Location(path, key_line(skill, "name")), Location(path, key_line(skill, "description"))
    out = [Problem(at_name, msg) for msg in name_problems(skill.name)]
    if folder is not None and folder != skill.name:
        out.append(Problem(at_name, f"name {skill.name!r} differs from its folder name {folder!r}"))
    if not skill.description.strip():
        out.append(Problem(at_description, "`description` must not be empty"))
    if len(skill.description) > MAX_DESCRIPTION:
        out.append(
            Problem(
                at_description,
                f"description is {len(skill.description)} characters; at most {MAX_DESCRIPTION} are allowed",
            )
        )
    if "<" in skill.description or ">" in skill.description:
        out.append(Problem(at_description, "description must not contain `<` or `>`"))
    if skill.compatibility is not None and len(skill.compatibility) > MAX_COMPATIBILITY:
        out.append(
            Problem(
                Location(path, key_line(skill, "compatibility")),
                f"compatibility is {len(skill.compatibility)} characters; at most {MAX_COMPATIBILITY} are allowed",
            )
        )
    return out


def front_matter_in_body(body: str) -> int | None:
    """The 1-based body line of a `---` fence a front-matter reader could take for the start of
    the skill's own front matter, or None.

    That is the body's first non-blank line when it is `---` (a parser that skips blank lines
    after the front matter, or one that reads the last block), and any `---` line opening a block,
    closed by another `---` line, that holds a line of a spec key (`name:`, `allowed-tools:`, ...):
    a file split at its `---` lines then yields those keys. A `---` thematic break or heading
    underline between paragraphs, and anything in fenced code, is Markdown.
    """
    lines = body.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is not None and _FENCE.match(lines[start]):
        return start + 1
    in_code, opened, keyed = False, None, False
    for i, line in enumerate(lines):
        if _CODE_FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        if _FENCE.match(line):
            if opened is not None and keyed:
                return opened + 1
            opened, keyed = i, False
        elif opened is not None and _KEY_LINE.match(line):
            keyed = True
    return None


def _unsafe_problems(skill: Skill, path: Path) -> list[Problem]:
    """Control and invisible characters in the front-matter values as read (a YAML escape such as
    `"\\e]0;x\\a"` or `"\\u202e"` is plain text in the file and an ESC once read) and in the body
    (a skill made in memory was never a file the reader checked)."""
    out = []
    fields = {
        "name": skill.name, "description": skill.description, "license": skill.license,
        "compatibility": skill.compatibility, "allowed-tools": skill.allowed_tools, "metadata": skill.metadata,
    }
    for key, value in fields.items():
        found = unsafe_value(value, one_line=key in ("name", "license", "compatibility", "allowed-tools"), _path=(key,))
        if found is not None:
            where, bad = found
            kind = "a line break or tab" if bad.char in "\t\n\r\x0c" else f"the character {bad.describe()}"
            out.append(
                Problem(
                    Location(path, key_line(skill, key)),
                    f"`{'.'.join(where)}` holds {kind}; front-matter values are plain text (it may be written as a "
                    "YAML escape)",
                )
            )
    char = find_unsafe(skill.body)
    if char is not None:
        out.append(
            Problem(
                Location(path, body_line(skill, char.line)),
                f"the body holds the character {char.describe()} at column {char.column}; a skill is plain text",
            )
        )
    return out
