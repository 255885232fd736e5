"""`frames adopt`: find the skills of a folder, repair each (adopt/repair.py), write them into skills/ and commit."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from frames_cli.adopt.frontmatter import Unrepairable
from frames_cli.adopt.repair import Draft, Repair, finish, is_valid, read_draft
from frames_cli.adopt.update import account, check_existing, folder_files
from frames_cli.errors import GitError, InputError, Location
from frames_cli.formats.skill import SKILL_FILE, SKILLS_DIR
from frames_cli.files.atomic import atomic_write_bytes, atomic_write_text

if TYPE_CHECKING:
    from frames_cli.gitstore.store import GitStore
    from frames_cli.gitstore.worktree import Finished
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

#: Describer: [(skill name, body)] → per skill (description, how it was written) or None to use the text.
Describer = Callable[[list[tuple[str, str]]], list[tuple[str, str] | None]]


#: Every FileReport status, in the order reports count them.
STATUSES = ("valid", "repaired", "updated", "unchanged", "unrepairable")


@dataclass
class FileReport:
    """What adoption did with one SKILL.md.

    Attributes:
        source: the file as found (path relative to the workspace when inside it).
        skill: the skill's folder name in skills/ after adoption.
        status: "valid" (nothing to change), "repaired", "updated" (an earlier adoption replaced by
            the library's new version), "unchanged" (adopted before, the library has no change),
            or "unrepairable" (left untouched: could not be repaired, or refused).
        changes: each change, one line (for "updated", one line per file added, removed or changed).
        reason: why it is unrepairable (None otherwise).
    """

    source: str
    skill: str
    status: str
    changes: list[str] = field(default_factory=list)
    reason: str | None = None

    def to_json(self) -> dict:
        """JSON-ready form (the fields as they are)."""
        return {
            "source": self.source, "skill": self.skill, "status": self.status, "changes": self.changes,
            "reason": self.reason,
        }


@dataclass
class AdoptReport:
    """The whole adoption: one FileReport per SKILL.md found, the files written and the commit.

    Attributes:
        into: the workspace's skills folder (relative to the workspace).
        in_place: the folder adopted is the workspace's own skills/.
        dry_run: nothing was written.
        written: workspace-relative paths written, moved or removed.
        commit: sha of the commit made on the current branch (None: none made).
        finished: what became of a change an earlier adopt or coldstart left uncommitted when it
            was killed (`gitstore.worktree.finish_pending`), done before this run read anything.
    """

    files: list[FileReport]
    into: str
    in_place: bool
    dry_run: bool
    written: list[str] = field(default_factory=list)
    commit: str | None = None
    finished: Finished | None = None

    def count(self, status: str) -> int:
        """How many files have `status`."""
        return sum(1 for f in self.files if f.status == status)

    def to_json(self) -> dict:
        """JSON-ready form: files, counts per status, written paths, commit, the earlier change finished."""
        return {
            "into": self.into, "in_place": self.in_place, "dry_run": self.dry_run, "commit": self.commit,
            "written": self.written, "finished_earlier": self.finished.to_json() if self.finished else None,
            "counts": {s: self.count(s) for s in STATUSES}, "files": [f.to_json() for f in self.files],
        }


def find_skill_files(folder: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The SKILL.md files of `folder`, one per skill folder, and those nested too deep.

    `folder` is a folder of skill folders (`folder/<skill>/SKILL.md`), or one skill folder itself.

    Returns:
        (the skill files, [(file, reason)] for SKILL.md files frames cannot place: skills are flat).
    """
    if (folder / SKILL_FILE).is_file():
        return [folder / SKILL_FILE], []
    found = sorted(p for p in folder.glob(f"*/{SKILL_FILE}") if p.is_file() and not p.parent.name.startswith("."))
    nested = sorted(
        p for p in folder.glob(f"*/*/**/{SKILL_FILE}") if p.is_file() and not (p.parent.parent / SKILL_FILE).exists()
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    return found, [
        (p, "nested skill folder: frames keeps skills flat, one folder per skill directly under the skills folder")
        for p in nested
    ]


def adopt(
    ws: Workspace, config: FramesConfig, source: Path | None = None, *, dry_run: bool = False, commit: bool = True,
    describer: Describer | None = None,
) -> AdoptReport:
    """Make the skills of `source` (default: the workspace's skills/) a valid library in skills/.

    Each file is repaired on its own (adopt/repair.py); one that cannot be is left untouched and
    reported with the reason. From another folder the skill folders are copied (with their other
    files) into skills/<name>/, the source left as it was; in place, files are rewritten and
    folders renamed where the name needed it. Then the written paths are committed on the current
    branch, authored by the user's git identity.

    Args:
        describer: writes missing descriptions (a model); None writes them from the body's text.

    Raises:
        InputError: `source` is not a folder, or holds no SKILL.md (exit 2); nothing written.
        GitError: a commit is asked for and the workspace is not in a git repository, or one git
            would not commit in (`check_committable`), or git does not know the user (user.name,
            user.email): checked before writing; or git refused the commit: every file written
            is put back first.
    """
    author = None if dry_run or not commit else _author(ws)
    finished = None
    if author is not None:
        from frames_cli.gitstore.committable import check_committable
        from frames_cli.gitstore.worktree import finish_pending

        # Before anything is read: a killed run's files are committed or put back first.
        finished = finish_pending(ws.root, ws.make_state_dir())
        check_committable(ws.root)
    src = (Path(source) if source is not None else ws.skills_dir).resolve()
    if not src.is_dir():
        raise InputError("not a folder of skills", Location(src))
    in_place = src == ws.skills_dir.resolve() or src.parent == ws.skills_dir.resolve()
    files, nested = find_skill_files(src)
    if not files and not nested:
        raise InputError(f"no {SKILL_FILE} found (expected <folder>/<skill>/{SKILL_FILE})", Location(src))
    reports: list[FileReport] = [
        FileReport(_shown(ws, p, src), p.parent.name, "unrepairable", reason=why) for p, why in nested
    ]
    drafts: list[tuple[Path, Draft | None, str | None, FileReport]] = []
    for path in files:
        report = FileReport(_shown(ws, path, src), path.parent.name, "valid")
        reports.append(report)
        draft = _read(path, report)
        if draft is not None:
            drafts.append(draft)
    written = _describe(drafts, describer)
    plans = _place(ws, src, in_place, drafts, written)
    result = AdoptReport(
        sorted(reports, key=lambda r: r.source), ws.relative(ws.skills_dir), in_place, dry_run, finished=finished
    )
    if dry_run:
        return result
    change = None
    if author is not None and plans:
        from frames_cli.gitstore.worktree import CheckoutChange

        change = CheckoutChange.begin(ws.root, ws.state_dir, "adopt")
    if change is None:
        result.written = _apply(ws, plans)
    else:
        with change.writing():
            result.written = _apply(ws, plans, change.touch)
        result.commit = change.commit(_message(result), author=author)
    return result


def _read(path: Path, report: FileReport) -> tuple[Path, Draft | None, str | None, FileReport] | None:
    """`path` with its repair (None: valid as it is) and text; None, with `report` marked
    unrepairable, when it cannot be repaired."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        report.status, report.reason = (
            "unrepairable", f"not UTF-8 text (byte {exc.start}); save it as UTF-8 and adopt again",
        )
        return None
    if is_valid(text, path.parent.name):
        return path, None, text, report
    try:
        return path, read_draft(text, path.parent.name), text, report
    except Unrepairable as exc:
        report.status, report.reason = "unrepairable", str(exc)
        return None


@dataclass
class _Plan:
    source: Path          # the skill folder found
    target: Path          # skills/<name>/
    text: str | None      # new SKILL.md text; None: the file is copied as it is
    update: bool = False  # target holds an earlier adoption, replaced by this version


def _describe(
    drafts: list[tuple[Path, Draft | None, str | None, FileReport]], describer: Describer | None
) -> dict[int, tuple[str, str] | None]:
    """Descriptions written by `describer` for the drafts that need one, by index into `drafts`."""
    need = [i for i, (_p, d, _t, _r) in enumerate(drafts) if d is not None and d.needs_description]
    if not need or describer is None:
        return {}
    answers = describer([(drafts[i][1].folder, drafts[i][1].body) for i in need])  # type: ignore[union-attr]
    return dict(zip(need, answers))


def _place(ws: Workspace, src: Path, in_place: bool, drafts: list[tuple[Path, Draft | None, str | None, FileReport]],
           written: dict[int, tuple[str, str] | None]) -> list[_Plan]:
    """Finish each draft, give it its folder in skills/ (refusing clashes), and plan the writes."""
    plans: list[_Plan] = []
    taken: dict[str, str] = {}
    for i, (path, draft, _text, report) in enumerate(drafts):
        repair = finish(draft, written.get(i)) if draft is not None else Repair(path.parent.name, None, [])
        report.skill = repair.folder
        if repair.reason:
            report.status, report.changes, report.reason = "unrepairable", [], repair.reason
            continue
        target = ws.skills_dir / repair.folder
        occupied = target.exists() and target.resolve() != path.parent.resolve()
        clash = taken.get(repair.folder) or (_shown(ws, target) if occupied and in_place else None)
        if clash:
            report.status, report.reason = (
                "unrepairable",
                f"its name {repair.folder!r} is taken by {clash}; rename one of the folders and adopt again",
            )
            continue
        update = False
        if occupied:  # from another folder, over a skill of that name: an update, or refused
            existing = check_existing(ws, _store(ws), repair.folder)
            if not existing.updatable:
                report.status, report.reason = "unrepairable", existing.reason
                continue
            update = True
        taken[repair.folder] = report.source
        if draft is not None:
            report.status, report.changes = "repaired", repair.changes
        if update:
            old = folder_files(target, ws.root)
            new = _new_files(ws, path.parent, target, repair.text)
            changed = account(old, new, f"{ws.relative(target)}/")
            report.status, report.changes = ("updated", changed) if changed else ("unchanged", [])
            if changed:
                plans.append(_Plan(path.parent, target, repair.text, update=True))
            continue
        if repair.text is not None or not in_place:
            plans.append(_Plan(path.parent, target, repair.text))
    return plans


def _store(ws: Workspace) -> GitStore | None:
    """The workspace's repository, or None outside one."""
    from frames_cli.gitstore.store import GitStore

    try:
        return GitStore(ws.root)
    except GitError:
        return None


def _new_files(ws: Workspace, source: Path, target: Path, text: str | None) -> dict[str, bytes]:
    """What `target` holds after adopting `source` over it: the source's files under the target's
    name (workspace-relative paths), SKILL.md being `text` when the repair rewrote it."""
    base = target.relative_to(ws.root)
    files = {(base / rel).as_posix(): data for rel, data in folder_files(source, source).items()}
    if text is not None:
        files[(base / SKILL_FILE).as_posix()] = text.encode("utf-8")
    return files


def _apply(ws: Workspace, plans: list[_Plan], touch: Callable[[list[str]], None] | None = None) -> list[str]:
    """Write the planned skills; returns every workspace-relative path written, moved or removed.

    `touch` (a `CheckoutChange.touch`) is given each plan's paths before they change, so a refused
    or killed commit can put them back.
    """
    paths: list[str] = []
    for plan in plans:
        if plan.update:
            paths += _replace(ws, plan, touch)
            continue
        if plan.source.resolve() == plan.target.resolve():
            done = [ws.relative(plan.target / SKILL_FILE)]
            if touch:
                touch(done)
            atomic_write_text(plan.target / SKILL_FILE, plan.text or "")
            paths += done
            continue
        inside = _inside(plan.source, ws.skills_dir)
        # The target folder does not exist yet (`_place` refuses a taken name): its paths are the
        # source's, under the new folder.
        files = sorted(
            p.relative_to(plan.source) for p in plan.source.rglob("*")
            if (p.is_file() or p.is_symlink()) and ".git" not in p.relative_to(plan.source).parts
        )
        moved = [ws.relative(plan.source / f) for f in files] if inside else []
        made = [ws.relative(plan.target / f) for f in files] + (
            [] if (plan.source / SKILL_FILE).exists() else [ws.relative(plan.target / SKILL_FILE)]
        )
        if touch:
            touch(moved + made)
        if inside:  # a folder of skills/ renamed: its other files move with it
            plan.source.rename(plan.target)
        else:
            shutil.copytree(plan.source, plan.target, ignore=shutil.ignore_patterns(".git"))
        if plan.text is not None:
            atomic_write_text(plan.target / SKILL_FILE, plan.text)
        paths += moved + [ws.relative(p) for p in sorted(plan.target.rglob("*")) if p.is_file()]
    return paths


def _replace(ws: Workspace, plan: _Plan, touch: Callable[[list[str]], None] | None) -> list[str]:
    """Make `plan.target` hold exactly the library's new version (files added, changed, removed);
    returns the workspace-relative paths that changed."""
    old = folder_files(plan.target, ws.root)
    new = _new_files(ws, plan.source, plan.target, plan.text)
    changed = sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))
    if touch:
        touch(changed)
    for path in changed:
        if path in new:
            (ws.root / path).parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(ws.root / path, new[path])
        else:
            (ws.root / path).unlink()
    return changed


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def _author(ws: Workspace):  # type: ignore[no-untyped-def]
    """The user's git identity, the commit's author (checked before anything is written)."""
    from frames_cli.gitstore.store import GitStore
    from frames_cli.gitstore.committable import is_git_worktree

    if not is_git_worktree(ws.root):
        raise GitError(f"{ws.root}: not a git repository (run `git init`, or adopt with --no-commit)")
    identity = GitStore(ws.root).user_identity()
    if identity is None:
        raise GitError(
            "git does not know who you are: set user.name and user.email (`git config`), or adopt with --no-commit"
        )
    return identity


def _shown(ws: Workspace, path: Path, src: Path | None = None) -> str:
    """`path` relative to the workspace when inside it, else from the adopted folder's name down.

    An outside path is never shown absolute: it goes into the commit message, and a host path such
    as /home/alice/... does not belong in a repository's history.
    """
    if _inside(path, ws.root) or src is None:
        return ws.relative(path)
    return (Path(src.name) / path.resolve().relative_to(src.resolve())).as_posix()


def _message(report: AdoptReport) -> str:
    """The commit message: a summary, then per skill what changed; a trailer names the command."""
    from frames_cli.gitstore.message import commit_message

    lines = []
    for f in report.files:
        if f.status == "repaired":
            lines.append(f"{SKILLS_DIR}/{f.skill} (from {f.source}):")
            lines += [f"- {change}" for change in f.changes]
        elif f.status == "updated":
            lines.append(f"{SKILLS_DIR}/{f.skill} updated from {f.source}:")
            lines += [f"- {change}" for change in f.changes]
        elif f.status == "unrepairable":
            lines.append(f"not adopted: {f.source}: {f.reason}")
    summary = (
        f"Adopt {report.count('valid') + report.count('repaired')} skill(s) as Agent Skills "
        f"({report.count('repaired')} repaired)"
    )
    if report.count("updated"):
        summary += f", update {report.count('updated')} adopted before"
    return commit_message(summary, "\n".join(lines), {"Frames-Command": "adopt"})
