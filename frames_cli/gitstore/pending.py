"""The journal of a change to the checkout on its way to a commit:
what each touched file held before, and how far the change got.

`frames coldstart` and `frames adopt` write skill files into the user's working tree and then
commit them (gitstore/worktree.py). Before a file is touched, its old bytes are copied into
`.frames/pending-commit/before/` and a line naming it is appended to `journal.jsonl`; once every
file is written a `written` line holds the commit message, and a `committed` line the commit. The
folder is removed when the change is committed or undone. A run killed at any point (kill -9, a
power cut after the lines reached the disk) leaves the folder, and the next run reads it to finish
the commit or put every file back (`worktree.finish_pending`): nothing is left as changes no run
can see.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from frames_cli.gitstore.identity import Identity
from frames_cli.files.atomic import atomic_write_bytes

PENDING_DIR = "pending-commit"
JOURNAL = "journal.jsonl"
VERSION = 1


@dataclass(frozen=True)
class Touched:
    """One workspace-relative POSIX `path` the change touched, and what it was before: `copy` is the
    file name of its old bytes under `before/` (None: the path did not exist), `mode` its permission
    bits, `link` its target when it was a symlink."""

    path: str
    copy: str | None
    mode: int = 0o644
    link: str | None = None


@dataclass
class Journal:
    """The pending change of one workspace, as read from or written to `<state_dir>/pending-commit/`.

    Attributes:
        folder: the journal's folder.
        command: the frames command making the change ("coldstart", "adopt").
        head: the commit HEAD named when the change began (None: no commit yet).
        touched: every path touched, in order, each once.
        made_dirs: folders (workspace-relative) that did not exist before the change made them.
        message, author: the commit's, once every file is written (`written` is True then).
        committed: the commit's sha once git made it (the index may still need updating).
    """

    folder: Path
    command: str
    head: str | None
    touched: list[Touched] = field(default_factory=list)
    made_dirs: list[str] = field(default_factory=list)
    written: bool = False
    message: str = ""
    author: Identity | None = None
    committed: str | None = None

    @classmethod
    def start(cls, state_dir: Path, command: str, head: str | None) -> Journal:
        """A new journal in `<state_dir>/pending-commit/` (anything there before is removed: call
        `read` first), its first line on disk."""
        folder = Path(state_dir) / PENDING_DIR
        # Whatever is there is no journal `read` can follow (a torn or foreign one, or a file of
        # that name): it names nothing to finish, and appending to it would make this one unreadable too.
        _remove(folder)
        (folder / "before").mkdir(parents=True)
        journal = cls(folder, command, head)
        started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        journal._append(
            {
                "kind": "begin", "version": VERSION, "command": command, "head": head, "pid": os.getpid(),
                "started": started,
            }
        )
        return journal

    @classmethod
    def read(cls, state_dir: Path) -> Journal | None:
        """The pending change of `state_dir`, or None when there is none.

        A last line cut short (the machine stopped while writing it) is ignored; the change is
        then read as it stood before that line. A journal whose first line is unreadable, or a
        `pending-commit` that is a symlink, names nothing to finish or undo and counts as none; a
        line naming an unsafe path (`..`, absolute) is left out.
        """
        folder = Path(state_dir) / PENDING_DIR
        if folder.is_symlink():
            return None
        records = _read_records(folder / JOURNAL)
        if not records or records[0].get("kind") != "begin" or records[0].get("version") != VERSION:
            return None
        journal = cls(folder, str(records[0].get("command") or "?"), records[0].get("head"))
        seen: set[str] = set()
        for rec in records[1:]:
            kind = rec.get("kind")
            if kind == "dir" and _safe(rec.get("path")):
                journal.made_dirs.append(str(rec["path"]))
            elif kind == "touch" and rec.get("path") not in seen and _safe(rec.get("path")):
                seen.add(rec["path"])
                journal.touched.append(
                    Touched(rec["path"], rec.get("copy"), int(rec.get("mode", 0o644)), rec.get("link"))
                )
            elif kind == "written":
                journal.written, journal.message = True, str(rec.get("message") or "")
                author = rec.get("author")
                journal.author = Identity(author[0], author[1]) if author else None
            elif kind == "committed":
                journal.committed = str(rec.get("sha"))
        return journal

    def touch(self, root: Path, paths: list[str]) -> None:
        """Record what each of `paths` (workspace-relative, under `root`) holds now, before it changes:
        its bytes copied under `before/`, then one journal line each. Paths already recorded are skipped."""
        known = {t.path for t in self.touched}
        lines: list[dict[str, Any]] = []
        for path in paths:
            if path in known:
                continue
            known.add(path)
            target = Path(root) / path
            missing = next(
                (p for p in reversed(Path(path).parents) if str(p) != "." and not (Path(root) / p).exists()), None
            )
            if missing is not None and missing.as_posix() not in self.made_dirs:
                self.made_dirs.append(missing.as_posix())
                lines.append({"kind": "dir", "path": missing.as_posix()})
            entry = Touched(path, None)
            if target.is_symlink():
                entry = Touched(path, None, 0o777, os.readlink(target))
            elif target.is_file():
                copy = f"{len(self.touched)}"
                shutil.copyfile(target, self.folder / "before" / copy)
                entry = Touched(path, copy, stat.S_IMODE(target.stat().st_mode))
            self.touched.append(entry)
            lines.append({"kind": "touch", "path": path, "copy": entry.copy, "mode": entry.mode, "link": entry.link})
        if lines:
            self._append(*lines)

    def mark_written(self, message: str, author: Identity | None) -> None:
        """Every file is written: record the commit's message and author."""
        self.written, self.message, self.author = True, message, author
        self._append({"kind": "written", "message": message, "author": [author.name, author.email] if author else None})

    def mark_committed(self, sha: str) -> None:
        """git made the commit `sha` (the user's index may still need its entries)."""
        self.committed = sha
        self._append({"kind": "committed", "sha": sha})

    def restore(self, root: Path) -> int:
        """Put every touched path back as it was before the change; returns how many files that changed.

        A path that did not exist is removed, with the folders left empty below the first folder of
        its path, and the folders the change made (`made_dirs`) when empty. Safe to run twice: a
        restored path is left as it is.
        """
        changed = 0
        for entry in reversed(self.touched):
            target = Path(root) / entry.path
            # A write killed half-way leaves its temporary file (`files.atomic`) beside the target.
            for partial in target.parent.glob(f".{glob.escape(target.name)}.*.tmp") if target.parent.is_dir() else []:
                partial.unlink(missing_ok=True)
            if entry.link is not None:
                if not (target.is_symlink() and os.readlink(target) == entry.link):
                    _remove(target)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(entry.link, target)
                    changed += 1
            elif entry.copy is not None:
                try:
                    data = (self.folder / "before" / entry.copy).read_bytes()
                except OSError:
                    continue  # its copy is gone (deleted by hand): the file is left as it is
                if (
                    target.is_symlink() or not target.is_file() or target.read_bytes() != data
                    or stat.S_IMODE(target.stat().st_mode) != entry.mode
                ):
                    _remove(target)
                    atomic_write_bytes(target, data, entry.mode)
                    changed += 1
            elif target.is_symlink() or target.exists():
                _remove(target)
                changed += 1
                _prune(Path(root), target.parent, entry.path)
        for folder in reversed(self.made_dirs):
            _remove_empty(Path(root) / folder)
        return changed

    def remove(self) -> None:
        """The change is finished: delete the journal's folder."""
        shutil.rmtree(self.folder, ignore_errors=True)

    def _append(self, *records: dict) -> None:
        with open(self.folder / JOURNAL, "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
            fh.flush()
            os.fsync(fh.fileno())


def _safe(path: object) -> bool:
    """A workspace-relative path a journal may name (`names.check_path`): nothing it restores lies outside."""
    from frames_cli.errors import InputError
    from frames_cli.gitstore.names import check_path

    try:
        check_path(path) if isinstance(path, str) else None
    except InputError:
        return False
    return isinstance(path, str)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _remove_empty(folder: Path) -> None:
    """Remove `folder` if it and every folder below it hold no file."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for child in folder.iterdir():
        _remove_empty(child)
    if not any(folder.iterdir()):
        folder.rmdir()


def _prune(root: Path, folder: Path, path: str) -> None:
    """Remove `folder` and its parents while empty, stopping below the path's first folder (`skills/`)."""
    top = root / path.split("/", 1)[0]
    while folder != top and folder.is_relative_to(top) and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _read_records(journal: Path) -> list[Any]:
    """The journal's lines as JSON, up to the first that does not parse (cut short); [] when it cannot be read."""
    try:
        lines = journal.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            break
    return records
