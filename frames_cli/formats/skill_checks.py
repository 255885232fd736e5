"""The spec rules and lints of one skill (name, description, compatibility, markers, back-links, credentials, length)."""

from __future__ import annotations

from pathlib import Path

from frames_cli.errors import Location
from frames_cli.formats.problems import Problem
from frames_cli.formats.protected import scan_protected
from frames_cli.formats.skill import BACKLINKS_KEY, MAX_COMPATIBILITY, MAX_DESCRIPTION, MAX_NAME, NAME_RE, SKILL_FILE, SKILLS_DIR, Skill
from frames_cli.secretscan import find_secrets


def name_problems(name: str) -> list[str]:
    """Spec rules for a skill name; empty when `name` is valid."""
    if not name:
        return ["`name` must not be empty"]
    out = []
    if len(name) > MAX_NAME:
        out.append(f"name is {len(name)} characters; at most {MAX_NAME} are allowed")
    if not NAME_RE.match(name):
        out.append(f"name {name!r} must be lowercase letters, digits and single hyphens (no leading or trailing hyphen)")
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
    `frames-backlinks`, a credential in the body or description (`secretscan`). Warnings: body longer than `max_body_lines` lines.
    """
    path = skill.path or Path(f"{SKILLS_DIR}/{skill.name}/{SKILL_FILE}")
    here = Location(path, 1)
    at_name, at_description = Location(path, key_line(skill, "name")), Location(path, key_line(skill, "description"))
    out = [Problem(at_name, msg) for msg in name_problems(skill.name)]
    if folder is not None and folder != skill.name:
        out.append(Problem(at_name, f"name {skill.name!r} differs from its folder name {folder!r}"))
    if not skill.description.strip():
        out.append(Problem(at_description, "`description` must not be empty"))
    if len(skill.description) > MAX_DESCRIPTION:
        out.append(Problem(at_description, f"description is {len(skill.description)} characters; at most {MAX_DESCRIPTION} are allowed"))
    if "<" in skill.description or ">" in skill.description:
        out.append(Problem(at_description, "description must not contain `<` or `>`"))
    if skill.compatibility is not None and len(skill.compatibility) > MAX_COMPATIBILITY:
        out.append(Problem(Location(path, key_line(skill, "compatibility")), f"compatibility is {len(skill.compatibility)} characters; at most {MAX_COMPATIBILITY} are allowed"))
    for line, msg in scan_protected(skill.body)[1]:
        out.append(Problem(Location(path, body_line(skill, line)), msg))
    try:
        skill.backlinks
    except ValueError as exc:
        out.append(Problem(Location(path, key_line(skill, "metadata")), f"metadata `{BACKLINKS_KEY}`: {exc}"))
    for hit in find_secrets(skill.body):
        # Skills are committed, pushed and pasted into prompts: a credential must never be one's text.
        out.append(Problem(Location(path, body_line(skill, hit.line)), f"holds a credential ({hit.kind}); remove it, skills are committed and shown to models"))
    for hit in find_secrets(skill.description):
        out.append(Problem(at_description, f"description holds a credential ({hit.kind}); remove it"))
    n_lines = len(skill.body.splitlines())
    if n_lines > max_body_lines:
        out.append(Problem(here, f"body has {n_lines} lines; keep it under {max_body_lines} (cost is an objective)", "warning"))
    return out

