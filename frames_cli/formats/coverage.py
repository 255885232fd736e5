"""Back-links against the policy text: coverage of every content line, and stale or broken links."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from frames_cli.errors import InputError, Location
from frames_cli.formats.policy import PolicyDocument, read_policy, span_sha256
from frames_cli.formats.problems import Problem
from frames_cli.formats.skill import BackLink, Skill


def _ranges(lines: list[int]) -> list[tuple[int, int]]:
    """Sorted line numbers → inclusive runs."""
    runs: list[tuple[int, int]] = []
    for no in sorted(lines):
        if runs and no == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], no)
        else:
            runs.append((no, no))
    return runs


@dataclass
class FileCoverage:
    """Coverage of one policy file.

    Attributes:
        file: workspace-relative path.
        content_lines: lines with text a reader sees (not blank in
        `PolicyDocument.view`: front matter and template tags do not count).
        covered: content lines covered by exactly one skill.
        uncovered: runs (start, end) of content lines no skill links to.
        overlaps: (line, [skill names]) for content lines more than one skill links to.
    """

    file: str
    content_lines: int
    covered: int
    uncovered: list[tuple[int, int]] = field(default_factory=list)
    overlaps: list[tuple[int, list[str]]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every content line covered exactly once."""
        return not self.uncovered and not self.overlaps

    def to_json(self) -> dict:
        """Plain JSON: {"file", "content_lines", "covered_once", "uncovered": [[start, end]],
        "overlaps": [{"line", "skills"}]}; line numbers are 1-based."""
        return {
            "file": self.file,
            "content_lines": self.content_lines,
            "covered_once": self.covered,
            "uncovered": [list(r) for r in self.uncovered],
            "overlaps": [{"line": line, "skills": names} for line, names in self.overlaps],
        }


def coverage(docs: list[PolicyDocument], skills: Iterable[Skill]) -> list[FileCoverage]:
    """How the back-links of `skills` cover each document's non-blank lines (stale links count
    by their line span: staleness is reported by `backlink_problems`)."""
    owners: dict[str, dict[int, list[str]]] = {d.file: {} for d in docs}
    sizes = {d.file: len(d.view) for d in docs}
    for skill in skills:
        for link in _links(skill):
            lines = owners.get(link.file)
            if lines is None:
                continue
            # A span past the file's end (a stale or hand-edited link) covers only the lines there are.
            for no in range(link.start, min(link.end, sizes[link.file]) + 1):
                names = lines.setdefault(no, [])
                if skill.name not in names:
                    names.append(skill.name)
    out = []
    for doc in docs:
        content = [no for no, ln in enumerate(doc.view, 1) if ln.strip()]
        lines = owners[doc.file]
        out.append(
            FileCoverage(
                file=doc.file,
                content_lines=len(content),
                covered=sum(1 for no in content if len(lines.get(no, [])) == 1),
                uncovered=_ranges([no for no in content if not lines.get(no)]),
                overlaps=[(no, lines[no]) for no in content if len(lines.get(no, [])) > 1],
            )
        )
    return out


def backlink_problems(root: Path, skills: Iterable[Skill]) -> tuple[list[Problem], list[str]]:
    """Check every back-link of `skills` against the policy files under workspace `root`.

    Returns:
        (problems, stale skill names). A link to a missing or unreadable file is an error; a link
        whose span is past the end of the file or whose text hash changed is a warning (stale: the
        policy changed since the skill was made).
    """
    problems: list[Problem] = []
    stale: list[str] = []
    cache: dict[str, list[str] | InputError] = {}
    for skill in skills:
        at = Location(skill.path or skill.file_path(), 1)
        for link in _links(skill):
            if link.file not in cache:
                cache[link.file] = _lines(root, link.file)
            lines = cache[link.file]
            where = f"{link.file}:{link.start}-{link.end}"
            if isinstance(lines, InputError):
                problems.append(Problem(at, f"back-link to {where} does not resolve: {lines.message}"))
                continue
            if link.end > len(lines) or span_sha256(lines, link.start, link.end) != link.sha256:
                heading = f" ({link.heading})" if link.heading else ""
                fix = (
                    "`frames coldstart --force` regenerates it, losing the edits"
                    if skill.edited
                    else "run `frames coldstart`"
                )
                problems.append(
                    Problem(
                        at, f"stale back-link: {where}{heading} changed since this skill was made ({fix})", "warning"
                    )
                )
                if skill.name not in stale:
                    stale.append(skill.name)
    return problems, stale


def _links(skill: Skill) -> list[BackLink]:
    """A skill's back-links; a malformed `frames-backlinks` is reported by `skill_problems`, not here."""
    try:
        return skill.backlinks
    except ValueError:
        return []


def _lines(root: Path, file: str) -> list[str] | InputError:
    path = (root / file).resolve()
    if root.resolve() not in path.parents or not path.is_file():
        return InputError("no such policy file")
    try:
        return read_policy(path, file).lines
    except InputError as exc:
        return exc
