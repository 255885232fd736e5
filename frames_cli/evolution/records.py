"""Run records: the `.frames/runs/<run-id>/` layout, the persisted RunState and Candidate schema, run listing.

Layout of one run folder (docs/ARCHITECTURE.md):
    state.json       RunState, rewritten atomically after every step (the checkpoint)
    ledger.json      spend per role (llm/ledger.py)
    exchanges.jsonl  audit log of model exchanges (llm/audit.py)
    report.json, report.md, report.xml   the final reports (evolution/report.py)

`state.json` carries `schema` (SCHEMA_VERSION); a file from a newer frames is refused, not guessed at.
Candidate commits live at `refs/frames/runs/<run-id>/<candidate-id>`; the review branch is `frames/<run-id>`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.errors import GitError, InputError, Location
from frames_cli.formats.problems import Problem
from frames_cli.workspace.atomic import atomic_write_json
from frames_cli.workspace.layout import Workspace

if TYPE_CHECKING:
    from frames_cli.gitstore.store import GitStore

SCHEMA_VERSION = 1
STATE_FILE = "state.json"
REPORT_FILES = {"json": "report.json", "markdown": "report.md", "junit": "report.xml"}
STATUSES = ("running", "finished", "stopped", "failed")
BASE_ID = "r0c0"
RUN_ID_RE = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")
CANDIDATE_ID_RE = re.compile(r"^r(\d+)c(\d+)$")


def new_run_id(now: datetime | None = None) -> str:
    """A fresh run id `YYYYMMDD-HHMMSS-<6 hex>` (UTC time, random suffix); ids sort by start time."""
    now = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def check_run_id(run_id: str) -> str:
    """Return `run_id` if it has the run id format (so it is safe in paths and ref names).

    Raises:
        InputError: anything else, for example a path like "../x".
    """
    if not RUN_ID_RE.match(run_id):
        raise InputError(f"not a run id (expected YYYYMMDD-HHMMSS-xxxxxx): {run_id!r}")
    return run_id


def candidate_id(round_no: int, index: int) -> str:
    """The id of the `index`-th child made in round `round_no` ("r2c1"); S0 is BASE_ID ("r0c0")."""
    return f"r{round_no}c{index}"


def candidate_ref(run_id: str, cand_id: str) -> str:
    """The ref that keeps a candidate's commit: `refs/frames/runs/<run-id>/<candidate-id>`."""
    if not CANDIDATE_ID_RE.match(cand_id):
        raise InputError(f"not a candidate id (expected r<round>c<n>): {cand_id!r}")
    return f"refs/frames/runs/{check_run_id(run_id)}/{cand_id}"


def review_branch(run_id: str) -> str:
    """The review branch name of a run: `frames/<run-id>`."""
    return f"frames/{check_run_id(run_id)}"


def utc_now() -> str:
    """The current UTC time as ISO 8601 with seconds ("2026-11-29T10:15:00+00:00")."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class FailureNote:
    """A failing case of the parent that motivated a candidate, as the reviewer sees it.

    Attributes:
        case_id: the case id.
        category: its business category.
        reason: why the check failed ("expected 'cancel', got 'refund'").
        symptom: the case's diagnosis symptom, if it has one ("" otherwise).
    """

    case_id: str
    category: str
    reason: str
    symptom: str = ""


@dataclass
class Candidate:
    """One skill set of a run: S0 (id BASE_ID, no parent) or a child commit, with its evaluation.

    Rates are 0..1 on the run's selection set (the gate and the front are computed on it; the
    paper's evaluation set E when the run does not split); `per_category` maps category → pass rate.
    `pass_rate` None means committed but not yet evaluated (the loop may checkpoint between the two).

    Attributes:
        id: "r<round>c<n>"; see `candidate_id`.
        commit: 40-hex sha of the candidate's commit (for S0 the run's base commit).
        parent_id: the parent candidate's id; None for S0.
        round: the round that made it (0 for S0).
        pass_rate: overall, case-weighted pass rate.
        per_category: {category: pass rate}.
        mean_tokens: mean prompt + completion tokens per case of the executor on E.
        cost_usd: executor cost of evaluating it on E in USD; None when the model's price is unknown.
        gate_passed: the gate verdict against S0; None for S0 itself and for unevaluated children.
        gate_details: `GateVerdict.to_json()` of evolution/gate.py: {"passed", "tolerance",
            "checks": [{"category", "baseline", "child", "floor", "passed"}]}; {} when not gated.
        changed_skills: names of the skills changed against the parent (added or rewritten), sorted.
        blueprints: `Blueprint.to_json()` of evolution/consensus.py, one per rewritten skill:
            {"skill", "new_skill", "description", "votes", "changes": [{"change", "rationale",
            "case_ids", "diagnosers"}]}.
        motivating_case_ids: the parent's failing cases cited by the kept proposals, sorted.
        failures: what those cases showed (a FailureNote per case id, when the loop had it).
        diff_size: lines inserted plus deleted under skills/ against the parent.
        dropped: {skill: why its change was dropped} (a rewrite that never validated).
        dropped_proposals: the round's proposals refused before the vote, one line each with the
            reason (a case value in the rule text, no cited case of the batch, a bad skill name).
        policy_changes: the policy sentences its rewrites removed or changed, each
            `policy_keeper.PolicyChange.to_json()` ({skill, sentence, source, kind, asked_by, case_ids}).
        votes_needed: q as a number of diagnosers, and `diagnosers` D, for "2 of 3 votes".
        case_counts: {category: n}, the cases of the selection set (E when the run does not split)
            each rate in `per_category` is over ({} in runs
            recorded before frames kept it); `n_cases` is their sum.
        samples: k, the samples per case (a rate is over n × k results).
        sets: {"diagnosis" | "selection" | "test": evolution/scoring.Scores JSON ({"pass_rate",
            "per_category", "mean_tokens", "cases", "lost"})}: the same candidate on each set side
            by side; "test" only once the sealed test set was scored at the end of the run.
        lost: results (case × sample) of its evaluation on E whose answer was lost to the model
            layer on every try: left out of every rate, the gate and diagnosis (0 in older runs).
        attribution: for a child that failed the gate (or was dominated) and changed several
            skills: `attribution.Attribution.to_json()` of its analysis plus "sub_child" (the id of
            the sub-child made without the implicated rewrites, or None) and "note"; {} otherwise.
        cut_from: for a sub-child, the child whose implicated rewrites it leaves out; None otherwise.
        left_out: for a sub-child, skill → the broken cases that implicated the rewrite left out.
    """

    id: str
    commit: str
    parent_id: str | None
    round: int
    pass_rate: float | None = None
    per_category: dict[str, float] = field(default_factory=dict)
    mean_tokens: float | None = None
    cost_usd: float | None = None
    gate_passed: bool | None = None
    gate_details: dict[str, Any] = field(default_factory=dict)
    changed_skills: list[str] = field(default_factory=list)
    blueprints: list[dict[str, Any]] = field(default_factory=list)
    motivating_case_ids: list[str] = field(default_factory=list)
    failures: list[FailureNote] = field(default_factory=list)
    diff_size: int = 0
    dropped: dict[str, str] = field(default_factory=dict)
    dropped_proposals: list[str] = field(default_factory=list)
    policy_changes: list[dict[str, Any]] = field(default_factory=list)
    votes_needed: int | None = None
    diagnosers: int | None = None
    sets: dict[str, Any] = field(default_factory=dict)
    case_counts: dict[str, int] = field(default_factory=dict)
    samples: int = 1
    lost: int = 0
    attribution: dict[str, Any] = field(default_factory=dict)
    cut_from: str | None = None
    left_out: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n_cases(self) -> int | None:
        """The number of cases the overall pass rate is over; None when not recorded."""
        return sum(self.case_counts.values()) if self.case_counts else None

    @property
    def evaluated(self) -> bool:
        """True once the candidate has been evaluated on E."""
        return self.pass_rate is not None

    def failed_categories(self) -> list[str]:
        """The categories below their gate floor, in the gate's order (empty when not gated)."""
        return [c["category"] for c in self.gate_details.get("checks", []) if not c["passed"]]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (key order as the fields)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any, where: Location) -> Candidate:
        """Inverse of `to_json`.

        Raises:
            InputError: at `where`, for a missing or unknown key or a value of the wrong kind.
        """
        values = _fields_from(cls, data, where)
        values["failures"] = [FailureNote(**_fields_from(FailureNote, f, where)) for f in values.get("failures", [])]
        if not CANDIDATE_ID_RE.match(str(values["id"])):
            raise InputError(f"bad candidate id {values['id']!r}", where)
        return cls(**values)


@dataclass
class RunState:
    """Everything a run has decided so far: the checkpoint `frames evolve` resumes from, and what
    `frames runs/front/review/promote` read. Written atomically to `.frames/runs/<id>/state.json`.

    Attributes:
        run_id: `YYYYMMDD-HHMMSS-<6 hex>`.
        base: 40-hex sha of the base commit (S0).
        status: "running", "finished" (a stopping rule ended it), "stopped" (stop file or signal),
            "failed" (an error ended it; see `error`).
        round: rounds completed.
        candidates: every candidate in creation order, S0 first.
        front: ids of the current Pareto-front members, in the order the selector cycles them.
        parent_cursor: the round-robin position in `front` of the next parent.
        stale_rounds: consecutive rounds without a new front member (for `patience`).
        seed: the run's seed.
        config: snapshot of the settings the run started with (plain JSON of FramesConfig parts).
        fingerprint: sha256 hex of the run's inputs besides the base (the counted cases and `config`;
            see driver.run_fingerprint); None for runs recorded before frames kept it.
        started, finished: ISO 8601 UTC times; `finished` None while running.
        spend_tokens: prompt + completion tokens spent on every role so far.
        spend_usd: USD spent so far where prices are known; None when no price was known.
        stop_reason: why the run ended ("patience", "max_rounds", "budget", "stop file", "SIGTERM", ...).
        error: the error that failed the run, one line.
        branch: the review branch made for the best front member, once made.
        checkpoint: stage data owned by evolution/checkpoint.py (what a resumed round must not redo).
        schema: SCHEMA_VERSION of the writer.
    """

    run_id: str
    base: str
    status: str = "running"
    round: int = 0
    candidates: list[Candidate] = field(default_factory=list)
    front: list[str] = field(default_factory=list)
    parent_cursor: int = 0
    stale_rounds: int = 0
    seed: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    fingerprint: str | None = None
    started: str = field(default_factory=utc_now)
    finished: str | None = None
    spend_tokens: int = 0
    spend_usd: float | None = None
    stop_reason: str | None = None
    error: str | None = None
    branch: str | None = None
    checkpoint: dict[str, Any] = field(default_factory=dict)
    schema: int = SCHEMA_VERSION

    def candidate(self, cand_id: str) -> Candidate:
        """The candidate with id `cand_id`.

        Raises:
            InputError: the run has no such candidate (the message lists the run's ids).
        """
        for cand in self.candidates:
            if cand.id == cand_id:
                return cand
        known = ", ".join(c.id for c in self.candidates) or "none"
        raise InputError(f"run {self.run_id} has no candidate {cand_id!r} (candidates: {known})")

    def base_candidate(self) -> Candidate | None:
        """S0, the candidate for the base commit, once it is recorded."""
        return next((c for c in self.candidates if c.parent_id is None), None)

    def lost_results(self) -> int:
        """Results lost to the model layer over every candidate's evaluations (E and the test set)."""
        return sum(c.lost + int((c.sets.get("test") or {}).get("lost", 0)) for c in self.candidates)

    def front_candidates(self) -> list[Candidate]:
        """The front members, in `front` order."""
        return [self.candidate(cid) for cid in self.front]

    def best(self) -> Candidate | None:
        """The front member with the highest pass rate (fewer mean tokens, then older, break ties)."""
        members = [c for c in self.front_candidates() if c.evaluated]
        if not members:
            return None
        return max(members, key=lambda c: (c.pass_rate, -(c.mean_tokens or 0.0), -self.candidates.index(c)))

    def to_json(self) -> dict[str, Any]:
        """Plain JSON of the whole state."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any, where: Location) -> RunState:
        """Inverse of `to_json`.

        Raises:
            InputError: at `where`: written by a newer frames (schema above SCHEMA_VERSION), a missing
                or unknown key, a bad run id, status or candidate, or a front id with no candidate.
        """
        if isinstance(data, dict) and isinstance(data.get("schema"), int) and data["schema"] > SCHEMA_VERSION:
            raise InputError(f"run state schema {data['schema']} is newer than this frames ({SCHEMA_VERSION}); upgrade frames", where)
        values = _fields_from(cls, data, where)
        if not isinstance(values["run_id"], str) or not RUN_ID_RE.match(values["run_id"]):
            raise InputError(f"bad run id {values['run_id']!r}", where)
        if values["status"] not in STATUSES:
            raise InputError(f"bad status {values['status']!r} (one of {', '.join(STATUSES)})", where)
        values["candidates"] = [Candidate.from_json(c, where) for c in values.get("candidates", [])]
        state = cls(**values)
        for cid in state.front:
            try:
                state.candidate(cid)
            except InputError as exc:
                raise InputError(exc.message, where) from None
        return state


@dataclass(frozen=True)
class RunSummary:
    """One line of `frames runs`. Rates 0..1, spend in tokens and USD (None = price unknown);
    `n_cases` the cases the rates are over (the selection set, E when the run does not split; None
    for runs recorded before frames kept case counts), `samples` the samples per case (k)."""

    run_id: str
    status: str
    stop_reason: str | None
    base: str
    rounds: int
    candidates: int
    front_size: int
    spend_tokens: int
    spend_usd: float | None
    base_pass_rate: float | None
    best_pass_rate: float | None
    best_id: str | None
    started: str
    finished: str | None
    branch: str | None
    n_cases: int | None = None
    samples: int = 1

    @classmethod
    def of(cls, state: RunState) -> RunSummary:
        """The summary of `state`."""
        base, best = state.base_candidate(), state.best()
        return cls(
            run_id=state.run_id,
            status=state.status,
            stop_reason=state.stop_reason,
            base=state.base,
            rounds=state.round,
            candidates=sum(1 for c in state.candidates if c.parent_id is not None),
            front_size=len(state.front),
            spend_tokens=state.spend_tokens,
            spend_usd=state.spend_usd,
            base_pass_rate=base.pass_rate if base else None,
            best_pass_rate=best.pass_rate if best else None,
            best_id=best.id if best else None,
            started=state.started,
            finished=state.finished,
            branch=state.branch,
            n_cases=base.n_cases if base else None,
            samples=base.samples if base else 1,
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON with the field names as keys (`frames runs --json`)."""
        return dataclasses.asdict(self)


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


def _fields_from(cls: type, data: Any, where: Location) -> dict[str, Any]:
    """The keyword arguments of dataclass `cls` from the JSON object `data`.

    Raises:
        InputError: `data` is not an object, lacks a field without default, has an unknown key, or a
            value whose JSON kind (object, list, string, number, bool) contradicts the field's type.
    """
    name = cls.__name__
    if not isinstance(data, dict):
        raise InputError(f"{name}: expected a JSON object, got {type(data).__name__}", where)
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise InputError(f"{name}: unknown keys {', '.join(unknown)}", where)
    missing = [
        f.name
        for f in known.values()
        if f.name not in data and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise InputError(f"{name}: missing keys {', '.join(missing)}", where)
    for key, value in data.items():
        kinds = _json_kinds(str(known[key].type))
        # bool is an int to isinstance, but `true` is no pass rate or round number.
        if kinds and (not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)):
            raise InputError(f"{name}.{key}: expected {known[key].type}, got {json.dumps(value)[:60]}", where)
    return dict(data)


def _json_kinds(annotation: str) -> tuple[type, ...]:
    """The Python types JSON produces for a field annotation (a string: `from __future__` is on);
    () when the annotation is not one of the simple kinds (then the value is not checked)."""
    kinds: list[type] = []
    for part in annotation.split("|"):
        head = part.strip().split("[", 1)[0]
        if head not in _JSON_KINDS:
            return ()
        kinds += _JSON_KINDS[head]
    return tuple(kinds)


_JSON_KINDS: dict[str, tuple[type, ...]] = {
    "None": (type(None),),
    "bool": (bool,),
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "list": (list,),
    "dict": (dict,),
}


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
