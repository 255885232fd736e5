"""The regression pool R: cases that passed in an accepted skill set, with the skills they used.

Stored in `.frames/regression-pool.json` (schema version 1). Evolution samples R into each
evaluation (`sample`) and shows the rewriter anchor cases of the skill it rewrites (`anchors`).
`frames evolve`, `frames eval` and `frames ingest` may run at the same time and each adds to R:
`save` reads the file again under `regression-pool.json.lock` and merges this process's additions
into what it finds, so no command overwrites entries another one added meanwhile.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from frames_cli.errors import InputError, Location
from frames_cli.files.atomic import atomic_write_json

if TYPE_CHECKING:
    from frames_cli.evaluation.runner import EvalReport
    from frames_cli.workspace.layout import Workspace

POOL_FILE = "regression-pool.json"
POOL_VERSION = 1
#: Seconds `save` waits for another process's save to end (a save takes milliseconds).
LOCK_TIMEOUT_S = 60.0


@dataclass
class PoolEntry:
    """One case in R.

    Attributes:
        skills: names of the skills the case used in its passing samples (union, sorted).
        commit: the accepted skill set's commit it last passed on.
        added: UTC time (ISO 8601) it entered or was last refreshed; `seq` orders entries by recency.
    """

    case_id: str
    category: str
    skills: list[str]
    commit: str
    added: str
    seq: int = 0


@dataclass
class RegressionPool:
    """R, loaded from and saved to `path`.

    Attributes:
        entries: case id → entry, as loaded plus this process's additions.
        added_here: case id → the entries `add` made since the last load or save, in order: what
            `save` merges into the file.
    """

    path: Path
    entries: dict[str, PoolEntry] = field(default_factory=dict)
    added_here: dict[str, PoolEntry] = field(default_factory=dict)

    @classmethod
    def load(cls, ws: Workspace) -> RegressionPool:
        """The workspace's pool (empty when the file does not exist yet).

        Raises:
            InputError: the file is not valid pool JSON (path and line named).
        """
        return cls(ws.state_dir / POOL_FILE, _read(ws.state_dir / POOL_FILE))

    def add(self, report: EvalReport, commit: str) -> list[str]:
        """Add (or refresh) every case that passed in all of its samples; returns their ids in order.

        A refreshed case keeps its id but gets the new commit, its current skills and a new `seq`.
        """
        by_case: dict[str, list] = {}
        for r in report.results:
            by_case.setdefault(r.case_id, []).append(r)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        seq = max((e.seq for e in self.entries.values()), default=0)
        added = []
        for case_id, results in by_case.items():
            if all(r.passed for r in results):
                seq += 1
                skills = sorted({s for r in results for s in r.skills_used})
                entry = PoolEntry(case_id, results[0].category, skills, commit, now, seq)
                self.entries[case_id] = self.added_here[case_id] = entry
                added.append(case_id)
        return added

    def sample(self, n: int, seed: int) -> list[str]:
        """Up to `n` case ids drawn without replacement; the same pool and seed give the same ids."""
        ids = sorted(self.entries)
        return sorted(random.Random(seed).sample(ids, min(n, len(ids))))

    def anchors(self, skill: str, n: int) -> list[str]:
        """Up to `n` ids of cases that passed while using `skill`, most recently added first."""
        using = [e for e in self.entries.values() if skill in e.skills]
        using.sort(key=lambda e: (-e.seq, e.case_id))
        return [e.case_id for e in using[:n]]

    def save(self) -> None:
        """Merge this process's additions into the file as it is now, and write it atomically.

        Under `<file>.lock` (a filelock, waited for up to LOCK_TIMEOUT_S): read the file again,
        put every entry `add` made since the last load or save over the stored one of its case
        (a refresh is newer than what it replaces), numbered after the newest stored `seq` in
        the order they were added, and write the result. Entries other processes stored
        meanwhile are kept; `entries` becomes the merged pool.

        Raises:
            InputError: the stored file became invalid pool JSON meanwhile (path and line named).
            filelock.Timeout: another process held the lock for LOCK_TIMEOUT_S.
        """
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S):
            merged = _read(self.path)
            seq = max((e.seq for e in merged.values()), default=0)
            for case_id, entry in sorted(self.added_here.items(), key=lambda item: item[1].seq):
                seq += 1
                merged[case_id] = replace(entry, seq=seq)
            entries = [asdict(e) for e in sorted(merged.values(), key=lambda e: e.seq)]
            atomic_write_json(self.path, {"version": POOL_VERSION, "entries": entries})
        self.entries, self.added_here = merged, {}


def _read(path: Path) -> dict[str, PoolEntry]:
    """The entries stored at `path` ({} when the file does not exist yet).

    Raises:
        InputError: the file is not valid pool JSON (path and line named).
    """
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", Location(path, exc.lineno)) from None
    if not isinstance(data, dict) or data.get("version") != POOL_VERSION or not isinstance(data.get("entries"), list):
        raise InputError(f"not a regression pool of version {POOL_VERSION}", Location(path, 1))
    try:
        entries = [PoolEntry(**e) for e in data["entries"]]
    except TypeError as exc:
        raise InputError(f"bad pool entry: {exc}", Location(path)) from None
    return {e.case_id: e for e in entries}
