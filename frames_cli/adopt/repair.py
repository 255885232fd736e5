"""Repairing one SKILL.md into a valid Agent Skills / frames skill, change by change, body kept byte for byte.

Pure: text in, text and a list of changes out; `adopt/run.py` reads folders and writes files.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.adopt.describe import clean, from_text, shorten
from frames_cli.adopt.frontmatter import Unrepairable, read_front, split_file
from frames_cli.errors import InputError
from frames_cli.formats.skill import MAX_DESCRIPTION, Skill
from frames_cli.formats.skill_checks import name_problems, skill_problems
from frames_cli.formats.skill_file import parse_skill, render_skill

#: Heading of the section that keeps a shortened description's full text, appended to the body.
FULL_DESCRIPTION_HEADING = "## Full description"
_STRING_KEYS = ("license", "compatibility", "allowed-tools")


@dataclass
class Draft:
    """A skill file read leniently, before its description is settled.

    Attributes:
        folder: the folder name the skill will have (`name` must equal it).
        front: front-matter key → value as read (None when the file had no front matter).
        after: the text after the closing fence, byte for byte (the whole file without one).
        body: `after` without its leading blank lines (what `parse_skill` calls the body).
        changes: what was changed so far, one line each.
    """

    folder: str
    front: dict[str, Any] | None
    after: str
    body: str
    changes: list[str] = field(default_factory=list)

    @property
    def needs_description(self) -> bool:
        """True when the file has no usable description (to be written from the body)."""
        value = (self.front or {}).get("description")
        return not _to_text(value).strip() if value is not None else True


@dataclass
class Repair:
    """The outcome for one file.

    Attributes:
        folder: the folder (and name) the skill has after adoption.
        text: the new file text; None when the file is left as it is (valid already, or unrepairable).
        changes: every change made, one line each (empty when nothing changed).
        reason: why the file cannot be adopted (None when it can).
    """

    folder: str
    text: str | None
    changes: list[str]
    reason: str | None = None


def target_folder(folder: str) -> str:
    """The valid skill name for a folder name (lowercase words joined by hyphens, ≤ 64 chars)."""
    from frames_cli.coldstart.naming import slug

    return folder if not name_problems(folder) else slug(folder)


def read_draft(text: str, folder: str) -> Draft:
    """Read `text` (a SKILL.md in folder `folder`) as leniently as can be.

    Raises:
        Unrepairable: its front matter cannot be read at all (see `frontmatter`).
    """
    split = split_file(text)
    target = target_folder(folder)
    changes = list(split.fixes)
    if target != folder:
        changes.append(f"folder {folder!r} renamed {target!r} (a skill name is lowercase words joined by hyphens)")
    if split.front is None:
        changes.append("front matter added (the file had none)")
        front = None
    else:
        front, fixes = read_front(split.front)
        changes += fixes
    body = split.after.lstrip("\r\n") if split.front is not None else split.after
    return Draft(target, front, split.after, body, changes)


def finish(draft: Draft, written_description: tuple[str, str] | None = None) -> Repair:
    """Make the skill valid: keys, name, description; render it and check it.

    Args:
        written_description: (description, how it was written) for a draft that needs one
            (`Draft.needs_description`), from a model; None writes it from the body's text.

    Returns:
        the Repair; `reason` set (and `text` None) when the result would still not be valid.
    """
    changes = list(draft.changes)
    front = dict(draft.front or {})
    metadata = _metadata(front.pop("metadata", None), changes)
    fields: dict[str, str] = {}
    for key in _STRING_KEYS:
        if key in front:
            fields[key] = _string_field(key, front.pop(key), changes)
    old_name = front.pop("name", None)
    description = front.pop("description", None)
    for key, value in front.items():
        moved = key if key not in metadata else f"adopted-{key}"
        metadata[moved] = _to_text(value)
        changes.append(f"key `{key}` moved under `metadata` as `{moved}: {_short(metadata[moved])}`")
    name = draft.folder
    if old_name is None:
        changes.append(f"name {name!r} added (the folder's name)")
    elif _to_text(old_name) != name:
        changes.append(f"name {_to_text(old_name)!r} → {name!r} (a skill's name must equal its folder's)")
    after = draft.after
    if draft.needs_description:
        description, how = written_description or (from_text(draft.body, name), "from the body's text")
        changes.append(f"description written {how}: {_short(description)!r}")
    else:
        description, after = _fit_description(_to_text(description), after, changes)
    skill = Skill(name=name, description=description, body="", metadata=metadata, license=fields.get("license"),
                  compatibility=fields.get("compatibility"), allowed_tools=fields.get("allowed-tools"))
    head = render_skill(skill).removesuffix("\n")  # the fences and keys; the body goes after as it was
    new_text = head + (after if draft.front is not None else "\n" + after)
    reason = _still_invalid(new_text, name)
    if reason:
        return Repair(name, None, changes, reason)
    return Repair(name, new_text, changes)


def repair_text(text: str, folder: str) -> Repair:
    """`read_draft` then `finish` with a description from the text; an Unrepairable becomes the reason."""
    try:
        draft = read_draft(text, folder)
    except Unrepairable as exc:
        return Repair(folder, None, [], str(exc))
    return finish(draft)


def _fit_description(description: str, after: str, changes: list[str]) -> tuple[str, str]:
    """(a description the spec accepts, the text after the front matter): a shortened
    description's full text is appended to the body, under FULL_DESCRIPTION_HEADING."""
    fixed = clean(description) if ("<" in description or ">" in description or "---" in description) else description
    if fixed != description:
        changes.append("description: `<` `>` written as ‹ › and `---` as — (the spec forbids them)")
    if len(fixed) <= MAX_DESCRIPTION:
        return fixed, after
    short = shorten(clean(fixed))
    glue = "" if not after or after.endswith("\n") else "\n"
    changes.append(f"description shortened from {len(description)} to {len(short)} characters; "
                   f"the full text is appended to the body under {FULL_DESCRIPTION_HEADING!r}")
    return short, f"{after}{glue}\n{FULL_DESCRIPTION_HEADING}\n\n{description.strip()}\n"


def _metadata(value: Any, changes: list[str]) -> dict[str, str]:
    """`metadata` as a string → string map (values converted and reported)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        changes.append(f"`metadata` was not a mapping: kept as `metadata.adopted-metadata: {_short(_to_text(value))}`")
        return {"adopted-metadata": _to_text(value)}
    out = {}
    for key, item in value.items():
        out[str(key)] = _to_text(item)
        if not isinstance(item, str):
            changes.append(f"metadata `{key}` written as the string {_short(out[str(key)])!r}")
    return out


def _string_field(key: str, value: Any, changes: list[str]) -> str:
    text = (
        " ".join(_to_text(v) for v in value) if key == "allowed-tools" and isinstance(value, list) else _to_text(value)
    )
    if not isinstance(value, str):
        changes.append(f"`{key}` written as the string {_short(text)!r}")
    return text


def _to_text(value: Any) -> str:
    """A YAML value as the string the spec wants: lists comma-joined, mappings as JSON, booleans
    and dates as YAML writes them."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return ", ".join(_to_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _still_invalid(text: str, folder: str) -> str | None:
    """The first error frames' checks find in the repaired text (the reference validator's rules), or None."""
    try:
        skill = parse_skill(text, Path(folder) / "SKILL.md")
    except InputError as exc:
        return f"still invalid after repair: {exc.message}"
    errors = [p for p in skill_problems(skill, folder=folder) if p.severity == "error"]
    return f"still invalid after repair: {errors[0].message}" if errors else None


def is_valid(text: str, folder: str) -> bool:
    """True when `text` already is a valid skill in folder `folder` (nothing to adopt)."""
    return not name_problems(folder) and _still_invalid(text, folder) is None

