"""The skill set: skills loaded from files or a folder (every
problem collected, bad skills left out), and back to files."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from frames_cli.errors import InputError, Location
from frames_cli.formats.problems import Problem
from frames_cli.formats.skill import SKILL_FILE, SKILLS_DIR, Skill
from frames_cli.formats.skill_checks import key_line, skill_problems
from frames_cli.formats.skill_file import parse_skill_bytes, render_skill


class SkillSet(Mapping[str, Skill]):
    """An ordered, read-only map name → Skill (ordered by name); `with_skill`/`without` make new sets."""

    def __init__(self, skills: list[Skill] | None = None):
        self._skills: dict[str, Skill] = {}
        for skill in sorted(skills or [], key=lambda s: s.name):
            if skill.name in self._skills:
                raise InputError(f"duplicate skill name {skill.name!r}", Location(skill.path or skill.name))
            self._skills[skill.name] = skill

    def __getitem__(self, name: str) -> Skill:
        return self._skills[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._skills)

    def __len__(self) -> int:
        return len(self._skills)

    def with_skill(self, skill: Skill) -> SkillSet:
        """A new set with `skill` added or replacing the one of the same name."""
        return SkillSet([s for s in self._skills.values() if s.name != skill.name] + [skill])

    def without(self, name: str) -> SkillSet:
        """A new set without the skill `name` (KeyError if absent)."""
        if name not in self._skills:
            raise KeyError(name)
        return SkillSet([s for s in self._skills.values() if s.name != name])

    @classmethod
    def check_files(
        cls, files: Mapping[str, bytes], *, max_body_lines: int = 500, base: Path | None = None
    ) -> tuple[SkillSet, list[Problem]]:
        """Parse and check skills from `{path: bytes}`; collect every problem instead of stopping.

        Paths are POSIX, `skills/<folder>/SKILL.md` or `<folder>/SKILL.md`; other files (a skill's
        `references/` or `scripts/`) are ignored. `base` is prefixed to paths in messages.

        Returns:
            (the skills that parsed without errors, all problems in path order). Duplicate names
            are errors on every file that uses the name.
        """
        problems: list[Problem] = []
        parsed: list[tuple[Skill, Path, bool]] = []
        for rel in sorted(files):
            parts = rel.removeprefix(f"{SKILLS_DIR}/").split("/")
            if len(parts) != 2 or parts[1] != SKILL_FILE:
                continue
            shown = (base / rel) if base else Path(rel)
            if ".." in parts or parts[0].startswith("."):
                problems.append(Problem(Location(shown), "skill folders must be plain names inside skills/"))
                continue
            try:
                skill = parse_skill_bytes(files[rel], shown)
            except InputError as exc:
                problems.append(Problem(exc.location or Location(shown), exc.message))
                continue
            found = skill_problems(skill, folder=parts[0], max_body_lines=max_body_lines)
            problems.extend(found)
            parsed.append((skill, shown, any(p.severity == "error" for p in found)))
        by_name: dict[str, list[tuple[Skill, Path]]] = {}
        for skill, shown, _ in parsed:
            by_name.setdefault(skill.name, []).append((skill, shown))
        for name, group in by_name.items():
            if len(group) > 1:
                users = ", ".join(str(at) for _, at in group)
                problems.extend(
                    Problem(Location(at, key_line(s, "name")), f"duplicate skill name {name!r} (used by {users})")
                    for s, at in group
                )
        keep = [skill for skill, _, bad in parsed if not bad and len(by_name[skill.name]) == 1]
        problems.sort(key=lambda p: (str(p.location.path), p.location.line or 0))
        return cls(keep), problems

    @classmethod
    def load_valid(
        cls, files: Mapping[str, bytes], *, base: Path | None = None, max_body_lines: int = 500
    ) -> tuple[SkillSet, list[Problem]]:
        """The skills of `files` that load, and the first error of each one that does not.

        For commands that work on a skill set (eval, evolve, ingest): one bad skill leaves that
        skill out, not the whole set; the caller must say which were left out (`left_out_message`).

        Returns:
            (the valid skills, one error Problem per skill file left out, in path order).
        """
        skills, problems = cls.check_files(files, base=base, max_body_lines=max_body_lines)
        return skills, left_out(problems)

    @classmethod
    def from_files(cls, files: Mapping[str, bytes], *, base: Path | None = None) -> SkillSet:
        """Load a set from `{path: bytes}` (see `check_files`), e.g. a tree read from git.

        Raises:
            InputError: the first error found, as `path:line: message`.
        """
        skills, problems = cls.check_files(files, base=base)
        errors = [p for p in problems if p.severity == "error"]
        if errors:
            raise InputError(errors[0].message, errors[0].location)
        return skills

    @staticmethod
    def read_dir(skills_dir: Path) -> dict[str, bytes]:
        """`{"skills/<folder>/SKILL.md": bytes}` for every skill folder under `skills_dir`."""
        skills_dir = Path(skills_dir)
        if not skills_dir.is_dir():
            return {}
        # A symlinked folder or SKILL.md is never read (`frames validate` names one leading outside).
        return {
            f"{SKILLS_DIR}/{p.parent.name}/{SKILL_FILE}": p.read_bytes()
            for p in sorted(skills_dir.glob(f"*/{SKILL_FILE}"))
            if p.is_file() and not p.is_symlink() and not p.parent.is_symlink()
        }

    @classmethod
    def from_dir(cls, skills_dir: Path) -> SkillSet:
        """Load every `skills_dir/<name>/SKILL.md` (InputError on the first error)."""
        skills_dir = Path(skills_dir)
        return cls.from_files(cls.read_dir(skills_dir), base=skills_dir.parent)

    def to_files(self) -> dict[str, bytes]:
        """`{"skills/<name>/SKILL.md": UTF-8 bytes}` for every skill (see `render_skill`)."""
        return {skill.file_path(): render_skill(skill).encode("utf-8") for skill in self._skills.values()}


def left_out(problems: Iterable[Problem]) -> list[Problem]:
    """The first error of each file among `problems` (warnings ignored), in the order given."""
    seen: dict[str, Problem] = {}
    for problem in problems:
        if problem.severity == "error":
            seen.setdefault(str(problem.location.path), problem)
    return list(seen.values())


def left_out_message(dropped: list[Problem], loaded: int) -> str:
    """One line for people: how many skills were left out and why, each as `path:line: message`.

    Empty when nothing was left out. Points to `frames validate` (every problem) and `frames adopt`
    (repairs what can be repaired).
    """
    if not dropped:
        return ""
    reasons = "; ".join(f"{p.location}: {p.message}" for p in dropped)
    return (f"warning: left out {len(dropped)} skill(s) that do not load, using the other {loaded} "
            f"(`frames validate` lists every problem, `frames adopt skills` repairs what it can): {reasons}")
