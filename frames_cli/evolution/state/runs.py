"""The run folders `.frames/runs/<run-id>/`: saving and reading
state.json, listing runs oldest first, finding a candidate.

Layout of one run folder (docs/ARCHITECTURE.md):
    state.json       RunState (evolution/state/records.py), rewritten atomically after every step (the checkpoint)
    ledger.json      spend per role (llm/store/ledger.py)
    exchanges.jsonl  audit log of model exchanges (llm/store/audit.py)
    report.json, report.md, report.xml   the final reports (evolution/report/report.py)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from frames_cli.errors import GitError, InputError, Location
from frames_cli.evolution.state.records import Candidate, RunState, RunSummary
from frames_cli.evolution.state.run_ids import CANDIDATE_ID_RE, RUN_ID_RE, check_run_id
from frames_cli.formats.problems import Problem
from frames_cli.files.atomic import atomic_write_json
from frames_cli.workspace.layout import Workspace

if TYPE_CHECKING:
    from frames_cli.gitstore.store import GitStore

STATE_FILE = "state.json"
REPORT_FILES = {"json": "report.json", "markdown": "report.md", "junit": "report.xml"}


def run_dir(ws: Workspace, run_id: str) -> Path:
    """`.frames/runs/<run-id>/` (InputError when `run_id` is not a run id)."""
    return ws.runs_dir / check_run_id(run_id)


def save_state(ws: Workspace, state: RunState) -> Path:
    """Write `state` to its run folder's state.json atomically; returns the path."""
    path = run_dir(ws, state.run_id) / STATE_FILE
    atomic_write_json(path, state.to_json())
    return path


def read_state(path: Path) -> RunState:
    """Load a state.json file.

    Raises:
        InputError: `path:line: message` for unreadable JSON or a bad record.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read run state: {exc.strerror}", Location(path)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", Location(path, exc.lineno)) from None
    return RunState.from_json(data, Location(path))


def load_run(ws: Workspace, run_id: str) -> RunState:
    """The state of run `run_id`.

    Raises:
        InputError: no such run (the message names the known runs), or its state.json is bad.
    """
    path = run_dir(ws, run_id) / STATE_FILE
    if not path.is_file():
        known = ", ".join(s.name for s in _run_dirs(ws)) or "none"
        raise InputError(f"no run {run_id} (runs: {known})", Location(ws.relative(ws.runs_dir)))
    return read_state(path)


def list_runs(ws: Workspace, problems: list[Problem] | None = None) -> list[RunSummary]:
    """Summaries of every run in `.frames/runs/`, oldest first (the order of `load_runs`).

    Args:
        problems: when given, a run whose state.json is unreadable is skipped and reported here
            (so one damaged run does not hide the others); when None, it raises.

    Raises:
        InputError: a damaged state.json, when `problems` is None.
    """
    return [RunSummary.of(state) for state in load_runs(ws, problems)]


def load_runs(ws: Workspace, problems: list[Problem] | None = None) -> list[RunState]:
    """The states of every run, oldest first; `problems` as in `list_runs`.

    The order is the one meaning of "newest run" in frames (`newest_run`, `frames front`, `frames
    status`, a bare candidate id, the run `frames evolve` resumes): by `started`, and runs started in
    the same second by the write time of their state.json. Not by run id: two runs started in the
    same second have ids in random order (the suffix), and runs of the same workspace hold its lock
    one after the other, so of two such runs the later one wrote its state last.
    """
    keyed: list[tuple[tuple[str, int], RunState]] = []
    for folder in _run_dirs(ws):
        try:
            state = read_state(folder / STATE_FILE)
        except InputError as exc:
            if problems is None:
                raise
            problems.append(Problem(exc.location or Location(folder), exc.message))
            continue
        # `started` is ISO 8601 UTC as utc_now writes it, so its text sorts in time order.
        keyed.append(((state.started, state_written_ns(ws, state.run_id)), state))
    return [state for _, state in sorted(keyed, key=lambda pair: pair[0])]


def newest_run(ws: Workspace, problems: list[Problem] | None = None) -> RunState | None:
    """The newest run in the order of `load_runs` (latest start), or None when there is none;
    `problems` as in `list_runs`."""
    states = load_runs(ws, problems)
    return states[-1] if states else None


def state_written_ns(ws: Workspace, run_id: str) -> int:
    """When the run's state.json was last written, in nanoseconds since the epoch: it orders runs
    whose recorded times tie, as those resolve to the second.

    Raises:
        OSError: the file is gone.
    """
    return (run_dir(ws, run_id) / STATE_FILE).stat().st_mtime_ns


def _run_dirs(ws: Workspace) -> list[Path]:
    """Run folders that hold a state.json, sorted by id."""
    if not ws.runs_dir.is_dir():
        return []
    return sorted(p for p in ws.runs_dir.iterdir() if RUN_ID_RE.match(p.name) and (p / STATE_FILE).is_file())


def find_candidate(ws: Workspace, spec: str, store: GitStore | None = None) -> tuple[RunState, Candidate]:
    """The run and candidate that `spec` names, for `frames review` and `frames promote`.

    `spec` is `<run-id>/<candidate-id>`; a bare candidate id ("r2c1"), taken from the newest run that
    has it; or any git revision of a candidate commit (a sha, `frames/<run-id>`), matched against
    every run's candidates, newest run first (needs `store`).

    Raises:
        InputError: nothing matches (the message says what was tried).
    """
    run_part, _, cand_part = spec.partition("/")
    if cand_part and RUN_ID_RE.match(run_part):
        # One named run: read its state alone, not every run's.
        state = load_run(ws, run_part)
        return state, state.candidate(cand_part)
    states = load_runs(ws, problems=[])
    if not states:
        raise InputError(f"no runs yet in {ws.relative(ws.runs_dir)} (run `frames evolve` first)")
    newest_first = states[::-1]
    if CANDIDATE_ID_RE.match(spec):
        for state in newest_first:
            match = next((c for c in state.candidates if c.id == spec), None)
            if match:
                return state, match
        raise InputError(f"no run has a candidate {spec!r}")
    if store is None:
        raise InputError(f"not a candidate id (r<round>c<n> or <run-id>/<candidate-id>): {spec!r}")
    try:
        sha = store.resolve(spec)
    except GitError:
        raise InputError(f"{spec!r} is neither a candidate id nor a commit of this repository") from None
    for state in newest_first:
        match = next((c for c in state.candidates if c.commit == sha), None)
        if match:
            return state, match
    raise InputError(f"commit {sha[:12]} ({spec}) is not a candidate of any run")
