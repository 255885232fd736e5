"""The sample store (`.frames/samples/`): a skill set's result records per case and sample index, kept
across runs, so samples of the same skills on the same cases are drawn once."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.llm.store.appender import LineAppender

if TYPE_CHECKING:
    from frames_cli.formats.case import Case
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

#: Folder under `.frames/` that holds the store.
STORE_DIR = "samples"
#: (cases, first sample, samples per case) → result records (`evolution.context.Evaluation.results`).
Draw = Callable[[list["Case"], int, int], list[dict]]


def skills_key(files: Mapping[str, bytes]) -> str:
    """Hex sha256 of a skill set's `skills/` files (path → bytes): two commits with the same skills share it.

    The agent under test sees the skills and nothing else of a commit, so the key of S0 at a base
    commit is `skills_key(store.read_files(base))`, and a front member's is that of its commit.
    """
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode("utf-8") + b"\0" + hashlib.sha256(files[path]).digest())
    return digest.hexdigest()


def case_key(case: Case) -> str:
    """Hex sha256 of what decides a case's result besides the skills: its category, task (input,
    expected answer, check) and diagnosis (the simulator reads the evidence). An edited case is a new case."""
    record = case.to_dict()
    blob = json.dumps(
        [record.get("category"), record.get("task"), record.get("diagnosis")], sort_keys=True, ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def setup_key(ws: Workspace, config: FramesConfig) -> str:
    """Hex sha256 of the settings that decide an answer besides the skills and the case.

    The agent (`executor.*` and its model), the judge's model, `llm.temperature` /
    `max_output_tokens` / `repair_turns`; with a command agent the content of every argument that
    names a file (its program, its script), so an edited agent draws afresh; with a simulated role
    the simulator's settings and the policy texts it reads.
    """
    from frames_cli.llm.transport.providers import SIM_PREFIX

    executor = config.executor
    parts: list[Any] = [asdict(executor), config.models.executor, config.models.judge,
                        config.llm.temperature, config.llm.max_output_tokens, config.llm.repair_turns]
    if executor.kind == "command":
        parts.append([_file_digest(ws.root, arg, first=i == 0) for i, arg in enumerate(executor.command)])
    if any(m and m.startswith(SIM_PREFIX + "/") for m in (config.models.executor, config.models.judge)):
        from frames_cli.sim.world import policy_texts

        parts += [asdict(config.simulator), hashlib.sha256("\0".join(policy_texts(ws)).encode("utf-8")).hexdigest()]
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _file_digest(root: Path, arg: str, first: bool) -> str | None:
    """sha256 of the file `arg` names (relative to the workspace; the program also on PATH), else None."""
    path = root / arg
    if not path.is_file() and first:
        found = shutil.which(arg)
        path = Path(found) if found else path
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    except OSError:
        return None


class SampleStore:
    """Result records keyed by (skill set, case, sample index), for one setup (`setup_key`).

    One JSON line per record in `<dir>/<setup key[:16]>/<skills key[:32]>.jsonl`, appended (a line
    cut short by a crash is skipped when read; a record stored twice keeps its last line). Only
    answered records are stored: a lost one (`lost`) is asked for again by the next draw. The
    records are those of `evolution.context.Evaluation.results` (case_id, category, sample, passed,
    reason, output, skills_used, trajectory, tokens, lost), with `case_key` added; a record served
    from the store carries `"stored": true`.

    Samples are independent draws numbered per case, as in the model cache (a sample's number is
    part of its cache key), so a stored sample stands for the draw it recorded; a later draw of the
    same number would be the same draw under the same model cache. Not for samples of a skill set
    whose results depend on anything `setup_key` leaves out (an agent's own data or service).

    Thread-safe within a process; written under the workspace lock by `frames evolve`.
    """

    def __init__(self, folder: Path, setup: str):
        self.dir = Path(folder) / setup[:16]
        self._lock = threading.Lock()
        self._loaded: dict[str, dict[tuple[str, str, int], dict]] = {}
        self._out = LineAppender()

    @classmethod
    def of(cls, ws: Workspace, config: FramesConfig) -> SampleStore:
        """The workspace's store for the setup `config` describes (`.frames/samples/`)."""
        return cls(ws.state_dir / STORE_DIR, setup_key(ws, config))

    def _records(self, skills: str) -> dict[tuple[str, str, int], dict]:
        """(case id, case key, sample) → record of skill set `skills` (lock held)."""
        records = self._loaded.get(skills)
        if records is None:
            records = self._loaded[skills] = {}
            try:
                with open(self._path(skills), encoding="utf-8") as fh:
                    for line in fh:
                        try:
                            r = json.loads(line)
                            records[r["case_id"], r["case_key"], int(r["sample"])] = r
                        except (ValueError, KeyError, TypeError):
                            continue
            except OSError:
                pass
        return records

    def _path(self, skills: str) -> Path:
        return self.dir / f"{skills[:32]}.jsonl"

    def get(self, skills: str, case: Case, sample: int) -> dict | None:
        """The stored record of sample `sample` of `case` under skill set `skills` (`skills_key`), or None."""
        with self._lock:
            found = self._records(skills).get((case.id, case_key(case), sample))
        return {**found, "stored": True} if found is not None else None

    def put(self, skills: str, cases: Mapping[str, Case], records: Sequence[dict]) -> None:
        """Store the answered `records` (of cases in `cases`, by id) of skill set `skills`; lost ones are skipped.

        Written to disk at `flush()` (or when enough lines are queued).
        """
        with self._lock:
            known = self._records(skills)
            for r in records:
                if r.get("lost") or r["case_id"] not in cases:
                    continue
                entry = {k: v for k, v in r.items() if k != "stored"}
                entry["case_key"] = case_key(cases[r["case_id"]])
                known[entry["case_id"], entry["case_key"], int(entry["sample"])] = entry
                self._out.add(self._path(skills), json.dumps(entry, ensure_ascii=False, sort_keys=True))

    def flush(self) -> None:
        """Append every queued record to its file now."""
        self._out.flush()

    def samples(self, skills: str, cases: Sequence[Case], first: int, count: int, draw: Draw) -> tuple[list[dict], int]:
        """Samples `first` … `first + count − 1` of every case of `cases` under skill set `skills`:
        stored ones from the store, the rest from `draw`, which are stored. Returns (records in case
        order then sample order, how many came from the store).

        `draw` is called once per group of cases that lack the same samples, with the first and the
        number of samples to draw (the range from the first missing sample to the last).
        """
        by_id = {c.id: c for c in cases}
        have: dict[tuple[str, int], dict] = {}
        groups: dict[tuple[int, int], list[Case]] = {}
        for case in cases:
            missing = []
            for s in range(first, first + count):
                found = self.get(skills, case, s)
                if found is None:
                    missing.append(s)
                else:
                    have[case.id, s] = found
            if missing:
                groups.setdefault((missing[0], missing[-1] + 1 - missing[0]), []).append(case)
        reused = len(have)
        for (start, n), group in groups.items():
            drawn = draw(group, start, n)
            self.put(skills, by_id, drawn)
            for r in drawn:
                have[r["case_id"], int(r["sample"])] = r
        self.flush()
        return [have[c.id, s] for c in cases for s in range(first, first + count) if (c.id, s) in have], reused
