"""The `frames validate` checks a command must pass before it writes anything (lock, run folder, refs)."""

from __future__ import annotations

import os
from pathlib import Path

from frames_cli.errors import InputError
from frames_cli.formats.problems import Problem
from frames_cli.workspace.layout import Workspace


def refuse_invalid_inputs(ws: Workspace) -> list[Problem]:
    """Raise the first error `frames validate` reports outside `skills/`, before any write.

    Skills are not refused: a skill that does not load is left out of the run with a warning
    (docs/decisions/0024-first-contact-with-a-provider.md), and validate still reports it. Case files are
    checked by the command's own loading, which runs the same checks (`formats.case_files`).

    Returns:
        The errors under `skills/` that are not about a SKILL.md file's text (a symlinked folder or
        file, a folder without SKILL.md): the caller warns of them, since reading the base commit
        shows none of them (git stores a link as a link, and no empty folder).

    Raises:
        InputError: `path:line: message` of the first error, with how many more there are (exit 2).
    """
    from frames_cli.workspace.health import inspect_workspace

    found = inspect_workspace(ws, with_cases=False).errors
    errors = [p for p in found if not _in_skills(ws, str(p.location.path))]
    if errors:
        more = f" (and {len(errors) - 1} more: `frames validate` lists them)" if len(errors) > 1 else ""
        raise InputError(errors[0].message + more, errors[0].location)
    return [
        p for p in found
        if p.location.line is None and not str(p.location.path).endswith("SKILL.md") or "symlink" in p.message
    ]


def _in_skills(ws: Workspace, path: str) -> bool:
    """Whether a problem's path (relative to the current folder, as validate shows it) lies under
    skills/; not resolved, so a symlink there counts as there."""
    where = Path(os.path.normpath(Path.cwd() / path))
    return where.is_relative_to(Path(os.path.normpath(ws.skills_dir.absolute())))
