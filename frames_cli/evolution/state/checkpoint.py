"""Checkpoints of an evolve run: the loop's own progress inside
RunState.checkpoint, saved atomically after every step."""

from __future__ import annotations

import dataclasses
import os
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frames_cli.errors import InputError, Location
from frames_cli.evolution.state.runs import load_runs, run_dir, save_state, state_written_ns

if TYPE_CHECKING:
    from frames_cli.evolution.state.records import RunState
    from frames_cli.workspace.layout import Workspace

#: Statuses of a run that a later `frames evolve` resumes.
UNFINISHED = ("running", "stopped")
#: Fault-injection hook for crash tests: after this many checkpoints in this process, the process
#: kills itself with SIGKILL (no clean-up runs, exactly like `kill -9`). Unset in normal use.
CRASH_ENV = "FRAMES_CRASH_AFTER_CHECKPOINTS"


@dataclass
class RoundRecord:
    """One round's progress and results; `done` lists the finished stages (see loop.STAGES).

    Attributes:
        round: 1-based round number.
        parent: parent candidate id.
        done: finished stage names, in order.
        batches: case ids per diagnoser.
        diagnoses: DiagnoserResult JSON per diagnoser.
        blueprints: Blueprint JSON of the skills that passed the vote.
        rejected: skill → votes, for skills that did not.
        outcomes: RewriteOutcome JSON per blueprint.
        child: the child's candidate id, or None when the round made no child.
        gate: the gate verdict on the child (GateVerdict JSON).
        note: why the round made no child (no failures, nothing passed the vote, all rewrites
            dropped, duplicate of an existing candidate), "" otherwise.
        batching: how the batches were formed (diagnose.batching_note); "" in older records.
        kind: "failures" (a child from diagnosed failures) or "cost" (a cost-directed child).
        attribution: the round's attribution steps, in order (stage `attribute`): each
            `attribution.Attribution.to_json()` of the child it analysed, with "note" (one sentence)
            and "sub_child" (the id of the sub-child made without the implicated rewrites, or None).
        costs: for a cost-directed round, the parent's skills by tokens per case (cost.SkillCost JSON).
    """

    round: int
    parent: str = ""
    done: list[str] = field(default_factory=list)
    batches: list[list[str]] = field(default_factory=list)
    diagnoses: list[dict] = field(default_factory=list)
    blueprints: list[dict] = field(default_factory=list)
    rejected: dict[str, int] = field(default_factory=dict)
    outcomes: list[dict] = field(default_factory=list)
    child: str | None = None
    gate: dict | None = None
    note: str = ""
    batching: str = ""
    kind: str = "failures"
    attribution: list[dict] = field(default_factory=list)
    costs: list[dict] = field(default_factory=list)


@dataclass
class LoopMemory:
    """What the loop keeps between steps beyond RunState's own fields (stored as RunState.checkpoint).

    The run's settings and models are in RunState.config, recorded once.

    Attributes:
        eval_case_ids: what every candidate is evaluated on during the run (diagnosis ∪ selection
            set; the paper's evaluation set E when the run does not split), in order.
        split: the run's sets (evolution/state/splits.Split JSON), fixed at its start; {} in runs
            recorded before held-out sets existed (they resume on E as one set).
        picks: candidate id → times chosen as parent (round-robin bookkeeping).
        rounds: finished rounds.
        pending: the round in progress, if any.
        disputes: case id → dispute (evolution/state/disputes.py) known to this run: from earlier runs
            (undecided at its start) and from its own diagnosers.
        case_keys: the content keys (evaluation/samples.case_key) of every case the run held, sorted:
            a case added later with a new id but the content of one of them is not new to the run
            (evolution/decide/prospective.py); [] in runs recorded before frames kept them.
        max_rounds: the rounds a resume with `--max-rounds` asked for (later resumes keep it); None:
            `evolution.max_rounds` as the run started.
    """

    eval_case_ids: list[str] = field(default_factory=list)
    split: dict[str, Any] = field(default_factory=dict)
    picks: dict[str, int] = field(default_factory=dict)
    rounds: list[RoundRecord] = field(default_factory=list)
    pending: RoundRecord | None = None
    disputes: dict[str, dict] = field(default_factory=dict)
    case_keys: list[str] = field(default_factory=list)
    max_rounds: int | None = None

    def to_json(self) -> dict:
        """Plain JSON (rounds as dicts of their fields), stored as RunState.checkpoint."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, obj: dict, where: Location) -> LoopMemory:
        """Inverse of `to_json`.

        Raises:
            InputError: at `where`, when the checkpoint is missing fields or damaged.
        """
        try:
            data = dict(obj)
            data["rounds"] = [RoundRecord(**r) for r in obj["rounds"]]
            data["pending"] = RoundRecord(**obj["pending"]) if obj.get("pending") else None
            return cls(**data)
        except (KeyError, TypeError) as exc:
            raise InputError(f"run checkpoint is damaged ({exc}); start a new run", where) from None


class Checkpointer:
    """Writes a run's state (with the loop's memory as `checkpoint`) atomically into its run folder."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.saves = 0

    def save(self, state: RunState, memory: LoopMemory) -> None:
        """Write `state`; a reader or a resumed run sees the previous state or this one, never a mix."""
        state.checkpoint = memory.to_json()
        save_state(self.ws, state)
        self.saves += 1
        crash_after = os.environ.get(CRASH_ENV)
        if crash_after and self.saves >= int(crash_after):
            os.kill(os.getpid(), signal.SIGKILL)

    def memory(self, state: RunState) -> LoopMemory:
        """The loop memory stored in `state` (InputError when it is damaged or absent)."""
        where = Location(run_dir(self.ws, state.run_id) / "state.json")
        if not state.checkpoint:
            raise InputError("run has no checkpoint to resume from; start a new run", where)
        return LoopMemory.from_json(state.checkpoint, where)


def find_unfinished(ws: Workspace, base_sha: str) -> str | None:
    """Id of the newest unfinished run started from `base_sha`, or None (damaged runs are skipped)."""
    for state in reversed(load_runs(ws, problems=[])):
        if state.base == base_sha and state.status in UNFINISHED:
            return state.run_id
    return None


def latest_finished(ws: Workspace) -> RunState | None:
    """The run that finished last (any base), or None (damaged runs are skipped).

    By finish time, not the start order of `load_runs`: the up-to-date check asks which run's result
    is current, and a resumed older run can finish after a newer one."""
    done = [state for state in load_runs(ws, problems=[]) if state.status == "finished"]
    # Timestamps resolve to the second; the state file's write time orders runs that finished
    # within the same second (tests, or a cron run right after a manual one).
    return max(done, key=lambda s: (s.finished or "", state_written_ns(ws, s.run_id)), default=None)
