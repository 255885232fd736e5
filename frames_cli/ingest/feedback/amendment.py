"""`frames ingest amendment`: what a policy amendment changed, which skills it makes stale, new cases for it.

Input is two versions of policy text: two files (OLD NEW), or a git range on `policies/`
(``A..B``; ``A`` alone means ``A..HEAD``), each file read at both commits.

Changed sections. Both versions are cut into sections (`generator.section_units`: each heading's
own lines); sections are paired by heading path. A section whose text differs (ignoring spacing)
is *changed*, one only in the new version *added*, one only in the old version *removed*. For each
changed section the sentences added and removed are listed.

Stale skills. Staleness is not stored anywhere: it is computed from the back-links every skill
carries (`frames-backlinks`: file, line span, sha256 of the span's text). A skill is stale when one
of its back-links points into a file the amendment touched and the sha256 of the new version's
lines at that span differs from the recorded one (or the file is gone). So no skill file is
changed here; the report names each stale skill with the back-link and the changed section(s) it
overlaps, and `frames validate` / `frames status` find the same skills again from the hashes
until coldstart or a person refreshes them.

Cases. With a generator model configured, the case generator (`generator.CaseGenerator`) is shown
each change's `focus` — for a changed section the paragraphs or lists that hold its added sentences
(so the cases test the new rule, in its context), for an added section all of it — and its cases
are stored with source kind ``amendment``, ``generated: true`` and ``reviewed: false``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from frames_cli.errors import InputError, Location
from frames_cli.formats.policy import decode_policy, is_companion, parse_policy, span_sha256
from frames_cli.formats.skill import BackLink
from frames_cli.formats.skill_set import SkillSet
from frames_cli.ingest.cases.generator import Unit, section_units
from frames_cli.words import sentences

KIND = "amendment"


@dataclass
class SectionChange:
    """One section the amendment touched.

    Attributes:
        status: "changed", "added" or "removed".
        unit: the section in the new version (the old one for "removed").
        added / removed: sentences only in the new / only in the old text.
        focus: what the case generator is shown: the paragraphs holding the added sentences of a
            changed section (the whole section when the change only removed text), the whole of
            an added section, nothing for a removed one.
    """

    file: str
    heading: str
    status: str
    unit: Unit
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    focus: list[Unit] = field(default_factory=list)


@dataclass
class StaleSkill:
    """A skill whose back-link no longer matches the policy text.

    Attributes:
        skill: the skill's name.
        backlink: the back-link that broke.
        reason: "text changed" or "file removed".
        sections: headings of the changed sections the back-link's span overlaps (new version).
    """

    skill: str
    backlink: BackLink
    reason: str
    sections: list[str] = field(default_factory=list)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _units(data: bytes | None, file: str, shown: str) -> tuple[list[str], list[Unit]]:
    if data is None:
        return [], []
    lines = decode_policy(data, shown)
    return lines, section_units([parse_policy(lines, file)])


def _blocks(lines: list[str], unit: Unit, added: Sequence[str]) -> list[Unit]:
    """The paragraphs or lists (runs of non-blank lines) of `unit` that hold an added sentence.

    A changed rule is tested in its context ("flight can be cancelled if any of the following is
    true:" above "- within the last 48 hrs"), but not with the rest of a long section, so the
    generator's cases are about the change. Returns `[unit]` when no sentence can be placed.
    """
    wanted = {_norm(a) for a in added}
    spans: list[tuple[int, int]] = []
    for number in range(unit.start, unit.end + 1):
        if not any(_norm(s) in wanted for s in sentences(lines[number - 1])):
            continue
        start, end = number, number
        while start > unit.start + 1 and lines[start - 2].strip():
            start -= 1
        while end < unit.end and lines[end].strip():
            end += 1
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    if not spans:
        return [unit]
    return [Unit(unit.file, unit.heading, a, b, "\n".join(lines[a - 1 : b])) for a, b in spans]


def section_changes(
    file: str, old: bytes | None, new: bytes | None, shown: tuple[str, str] | None = None
) -> list[SectionChange]:
    """The sections of `file` that differ between the `old` and `new` bytes (None: file absent).

    `shown` names the two versions in error messages (the OLD and NEW paths, or `<commit>:<file>`);
    default: `file` for both.

    Raises:
        InputError: a version is binary, not UTF-8 or empty (see `formats.policy.decode_policy`).
    """
    old_shown, new_shown = shown or (file, file)
    _, old_units = _units(old, file, old_shown)
    new_lines, new_units = _units(new, file, new_shown)
    before = {u.heading: u for u in old_units}
    after = {u.heading: u for u in new_units}
    changes: list[SectionChange] = []
    for heading, unit in after.items():
        prior = before.get(heading)
        if prior is None:
            changes.append(SectionChange(file, heading, "added", unit, added=sentences(unit.text), focus=[unit]))
        elif _norm(prior.text) != _norm(unit.text):
            old_s, new_s = sentences(prior.text), sentences(unit.text)
            old_n, new_n = {_norm(s) for s in old_s}, {_norm(s) for s in new_s}
            added = [s for s in new_s if _norm(s) not in old_n]
            changes.append(SectionChange(file, heading, "changed", unit, added=added,
                                         removed=[s for s in old_s if _norm(s) not in new_n],
                                         focus=_blocks(new_lines, unit, added)))
    for heading, unit in before.items():
        if heading not in after:
            changes.append(SectionChange(file, heading, "removed", unit, removed=sentences(unit.text)))
    return changes


def stale_skills(
    skills: SkillSet, new_files: Mapping[str, bytes | None], changes: Sequence[SectionChange]
) -> list[StaleSkill]:
    """Skills with a back-link into `new_files` whose recorded sha256 no longer matches (see module docstring).

    Args:
        new_files: workspace-relative policy path → its new bytes (None: removed), for the touched files.
    """
    lines_of = {f: (decode_policy(b, f) if b is not None else None) for f, b in new_files.items()}
    out: list[StaleSkill] = []
    for name, skill in skills.items():
        for link in skill.backlinks:
            if link.file not in lines_of:
                continue
            lines = lines_of[link.file]
            if lines is None:
                out.append(StaleSkill(name, link, "file removed"))
                continue
            if link.end <= len(lines) and span_sha256(lines, link.start, link.end) == link.sha256:
                continue
            overlapping = [
                c.heading for c in changes if c.file == link.file
                and c.status != "removed"
                and c.unit.start <= link.end
                and link.start <= c.unit.end
            ]
            out.append(StaleSkill(name, link, "text changed", overlapping))
    return out


def read_pair(old: Path, new: Path) -> tuple[bytes, bytes]:
    """The bytes of two policy versions given as files.

    Raises:
        InputError: a file cannot be read (naming it).
    """
    out = []
    for path in (old, new):
        try:
            out.append(Path(path).read_bytes())
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", Location(path)) from None
    return out[0], out[1]


def git_versions(
    root: Path, policies_dir: Path, spec: str
) -> tuple[str, dict[str, bytes | None], dict[str, bytes | None]]:
    """Policy files that differ between the two ends of a git range.

    Args:
        root: the workspace root; policies_dir: its `policies/`.
        spec: ``A..B`` or ``A`` (meaning ``A..HEAD``).

    Returns:
        (the range as resolved short shas "abc1234..def5678", {workspace-relative path: old bytes or
        None}, {path: new bytes or None}) for the files whose bytes differ.

    Raises:
        GitError: not a git repository, or a revision that names no commit.
    """
    from frames_cli.gitstore.store import GitStore

    a, _, b = spec.partition("..")
    store = GitStore(root)
    sha_a, sha_b = store.resolve(a), store.resolve(b or "HEAD")
    # GitStore paths are workspace-relative, wherever the workspace lies in the repository.
    folder = Path(policies_dir).resolve().relative_to(Path(root).resolve()).as_posix() + "/"
    old = store.read_files(sha_a, folder)
    new = store.read_files(sha_b, folder)
    touched = sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p) and not is_companion(Path(p)))
    return f"{sha_a[:7]}..{sha_b[:7]}", {p: old.get(p) for p in touched}, {p: new.get(p) for p in touched}
