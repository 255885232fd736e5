"""What `frames validate` and `frames status` find in a workspace: problems, coverage, staleness, cases."""

from __future__ import annotations

import os
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from frames_cli.formats.coverage import FileCoverage, backlink_problems, coverage
from frames_cli.errors import ConfigError, InputError, Location
from frames_cli.formats.policy import PolicyDocument, policy_files, read_policy
from frames_cli.formats.problems import Problem
from frames_cli.formats.skill import GENERATED_KEY
from frames_cli.formats.skill_set import SkillSet
from frames_cli.secretscan import find_secrets
from frames_cli.workspace.config import FramesConfig
from frames_cli.workspace.config_file import RetiredSetting
from frames_cli.workspace.layout import Workspace
from frames_cli.files.links import first_symlink


@dataclass
class Health:
    """The state of a workspace.

    Attributes:
        config: the loaded settings (defaults when `frames.yaml` is invalid; see `problems`).
        skills: skills that passed their checks.
        skill_files: SKILL.md files found (valid or not).
        edited: names of skills coldstart wrote that were changed since (by a person or a rewrite).
        stale: names of skills whose back-linked policy text changed.
        docs: policy documents that could be read.
        coverage: per policy document, how skills' back-links cover its non-blank lines.
        cases_by_category: number of cases per category (None when the case format is unavailable).
        problems: everything wrong, errors and warnings, sorted by file and line.
    """

    config: FramesConfig
    skills: SkillSet
    skill_files: int = 0
    edited: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    docs: list[PolicyDocument] = field(default_factory=list)
    coverage: list[FileCoverage] = field(default_factory=list)
    cases_by_category: dict[str, int] | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        """The problems of severity "error" (any one makes `frames validate` exit 2)."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """Every other problem (`frames validate` exits 2 on these only with --strict)."""
        return [p for p in self.problems if p.severity != "error"]


def _shown(ws: Workspace) -> Path:
    """The workspace root as messages show it: relative to the current folder when inside it."""
    try:
        return ws.root.relative_to(Path.cwd().resolve())
    except ValueError:
        return ws.root


def _config(ws: Workspace, shown: Path, problems: list[Problem]) -> FramesConfig:
    """The workspace's settings, the defaults when frames.yaml is invalid (an error in `problems`);
    each retired key it holds is a warning in `problems` (`shown`: frames.yaml as messages show it)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RetiredSetting)
        try:
            config = ws.config()
        except ConfigError as exc:
            config = FramesConfig()
            problems.append(Problem(Location(shown, exc.location.line if exc.location else None), exc.message))
    for warning in caught:
        if isinstance(warning.message, RetiredSetting):
            problems.append(Problem(Location(shown, warning.message.location.line), warning.message.text, "warning"))
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return config


def _policies(ws: Workspace, base: Path, problems: list[Problem]) -> list[PolicyDocument]:
    docs: list[PolicyDocument] = []
    if first_symlink(ws.root, ws.policies_dir) is not None:
        problems.append(
            Problem(
                Location(base / "policies"),
                f"is a symlink (to {os.readlink(ws.policies_dir)}); frames reads no policy through a symlink",
            )
        )
        return docs
    for path in policy_files(ws.policies_dir):
        rel = path.relative_to(ws.root).as_posix()
        try:
            doc = read_policy(path, rel)
            docs.append(doc)
            problems += [
                Problem(
                    Location(base / rel, hit.line),
                    f"holds a credential ({hit.kind}); coldstart would copy it into a skill: remove it",
                )
                for hit in find_secrets("\n".join(doc.lines))
            ]
        except InputError as exc:
            loc = exc.location or Location(rel)
            problems.append(Problem(Location(base / str(loc.path), loc.line), exc.message))
    return docs


def skill_folder_problems(ws: Workspace, base: Path) -> list[Problem]:
    """Skill folders of the working tree that `SkillSet.read_dir` passes over without a word: a
    symlinked folder or SKILL.md (never read), a folder without SKILL.md. Locations under `base`."""
    problems = []
    if ws.skills_dir.is_dir():
        for folder in sorted(ws.skills_dir.iterdir()):
            link = first_symlink(ws.root, folder / "SKILL.md")
            if link is not None:
                problems.append(
                    Problem(
                        Location(base / link.relative_to(ws.root)),
                        f"is a symlink (to {os.readlink(link)}); frames reads no skill through a symlink",
                    )
                )
            elif folder.is_dir() and not folder.name.startswith(".") and not (folder / "SKILL.md").is_file():
                problems.append(Problem(Location(base / "skills" / folder.name), "skill folder has no SKILL.md"))
    return problems


def _coverage_problems(cov: list[FileCoverage], base: Path) -> list[Problem]:
    out = []
    for fc in cov:
        for start, end in fc.uncovered:
            span = f"lines {start}-{end} are" if end > start else f"line {start} is"
            out.append(
                Problem(Location(base / fc.file, start), f"{span} not covered by any skill's back-links", "warning")
            )
        for line, names in fc.overlaps:
            out.append(
                Problem(
                    Location(base / fc.file, line), f"line covered by {len(names)} skills: {', '.join(names)}",
                    "warning",
                )
            )
    return out


def inspect_workspace(ws: Workspace, *, with_cases: bool = True) -> Health:
    """Check everything in the workspace and collect every problem (nothing raises for bad files).

    Checks: `frames.yaml`; a change to skills/ left pending by a killed coldstart or adopt
    (gitstore/pending.py); every SKILL.md (spec rules, lints, duplicate names, references to other
    skills, back-links resolving and matching their hashes); every policy document (readable text);
    coverage of policy text by back-links; case files (unless `with_cases` is False).
    """
    base = _shown(ws)
    problems: list[Problem] = []
    config = _config(ws, base / ws.config_path.name, problems)
    if first_symlink(ws.root, ws.state_dir) is not None:
        problems.append(
            Problem(
                Location(base / ws.state_dir.name),
                f"is a symlink (to {os.readlink(ws.state_dir)}); frames writes its state only inside the workspace",
            )
        )
    pending = ws.state_dir / "pending-commit"
    if pending.is_dir() and not pending.is_symlink():
        # A coldstart or adopt killed before its commit: skills/ may hold its half-written files.
        problems.append(
            Problem(
                Location(base / ws.state_dir.name / pending.name),
                "an earlier `frames coldstart` or `frames adopt` was stopped "
                "before its commit; run either to finish or undo it before editing skills/",
                "warning",
            )
        )
    files = SkillSet.read_dir(ws.skills_dir)
    skills, skill_problems = SkillSet.check_files(files, max_body_lines=config.evolution.max_body_lines, base=base)
    problems += skill_problems
    problems += skill_folder_problems(ws, base)
    for skill in skills.values():
        for ref in skill.references:
            if ref not in skills:
                problems.append(Problem(Location(skill.path or skill.name, 1), f"references unknown skill {ref!r}"))
    links, stale = backlink_problems(ws.root, skills.values())
    problems += links
    docs = _policies(ws, base, problems)
    cov = coverage(docs, skills.values())
    problems += _coverage_problems(cov, base)
    health = Health(
        config, skills, len(files), [s.name for s in skills.values() if GENERATED_KEY in s.metadata and s.edited],
        stale, docs, cov,
    )
    if with_cases:
        from frames_cli.formats.case_files import case_files, check_case_files

        cases, case_problems = check_case_files(case_files(ws.root, config.eval.cases))
        health.cases_by_category = dict(sorted(Counter(c.category for c in cases).items()))
        problems += [
            Problem(Location(_rebase(p.location.path, ws, base), p.location.line), p.message, p.severity)
            for p in case_problems
        ]
    health.problems = sorted(problems, key=lambda p: (str(p.location.path), p.location.line or 0))
    return health


def _rebase(path: Path | str, ws: Workspace, base: Path) -> Path:
    try:
        return base / Path(path).resolve().relative_to(ws.root)
    except ValueError:
        return Path(path)
