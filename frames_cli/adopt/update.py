"""Re-adoption: a skill adopted from a library before and unchanged since is
updated from the library's new version; any other skill of that name is left alone.

A library is adopted with `frames adopt DIR`; when it changes upstream, `frames adopt DIR` again
brings the changes in as one commit. A skill folder counts as "as adopted" when the last commit
that changed it is an adopt commit (trailer `Frames-Command: adopt`) and the working tree holds
exactly what that commit left: a skill a person edited since, or one frames did not adopt (made
by coldstart or by hand), is never overwritten.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from frames_cli.errors import GitError, UnknownRevisionError
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.layout import Workspace

ADOPT_TRAILER = ("Frames-Command", "adopt")


@dataclass(frozen=True)
class Existing:
    """Whether the skill folder already in skills/ may be replaced by the library's new version.

    Attributes:
        updatable: it is exactly what an earlier `frames adopt` committed.
        reason: why not, for the report (None when updatable).
    """

    updatable: bool
    reason: str | None = None


def folder_files(folder: Path, root: Path) -> dict[str, bytes]:
    """{path relative to `root`, POSIX: bytes} of every file under `folder` (no `.git`)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(folder).parts}


def check_existing(ws: Workspace, store: GitStore | None, name: str) -> Existing:
    """May `skills/<name>/` be updated from a library (see the module docstring)?

    Args:
        store: the workspace's repository; None when it is not in one (never updatable then).
    """
    prefix = f"skills/{name}/"
    if store is None:
        return Existing(
            False,
            f"{prefix} exists and the workspace is not a git repository, so frames cannot tell whether it was adopted",
        )
    try:
        entries = store.log("HEAD", [prefix], max_count=1)
    except (GitError, UnknownRevisionError):  # no commit yet
        entries = []
    if not entries:
        return Existing(False, f"{prefix} exists and is not committed; commit or move it, then adopt again")
    last = entries[0]
    subject = last.message.splitlines()[0] if last.message else ""
    if last.trailers.get(ADOPT_TRAILER[0]) != ADOPT_TRAILER[1]:
        return Existing(
            False,
            f"{prefix} exists and was not adopted from a library (last changed by {last.sha[:12]} “{subject}”); "
            "rename one of the folders and adopt again",
        )
    committed = store.read_files("HEAD", prefix)
    if folder_files(ws.skills_dir / name, ws.root) != committed:
        return Existing(
            False, f"{prefix} has changes not committed since it was adopted; commit or undo them, then adopt again"
        )
    return Existing(True)


def account(old: dict[str, bytes], new: dict[str, bytes], shown: str) -> list[str]:
    """One line per file that differs between the adopted version `old` and the library's `new`
    (paths relative to the workspace): added, removed, or changed with its lines added and
    removed; empty when nothing differs.

    Args:
        shown: the skill folder as printed (`skills/<name>/`), cut from the paths.
    """
    lines = []
    for path in sorted(set(old) | set(new)):
        name = path.removeprefix(shown)
        if path not in old:
            lines.append(f"{name}: added")
        elif path not in new:
            lines.append(f"{name}: removed")
        elif old[path] != new[path]:
            try:
                a, b = old[path].decode("utf-8").splitlines(), new[path].decode("utf-8").splitlines()
            except UnicodeDecodeError:
                lines.append(f"{name}: changed (binary)")
                continue
            diff = list(difflib.unified_diff(a, b, lineterm="", n=0))
            added = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
            removed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
            lines.append(f"{name}: +{added} −{removed} lines")
    return lines
