"""A round's record and the loop's memory, typed: what a resumed run must not redo. JSON only at the
checkpoint: `LoopMemory.to_json()` is stored as `RunState.checkpoint` (evolution/state/checkpoint.py
writes it) and `LoopMemory.from_json` reads it back (InputError when it is damaged).

The round's lessons (what a finished round tried and saw fail, evolution/propose/lessons.Lesson) are
read off its record here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frames_cli.errors import InputError, Location
from frames_cli.evolution.compare.verdict import GateVerdict
from frames_cli.evolution.propose.consensus import Blueprint
from frames_cli.evolution.propose.diagnose import DiagnoserResult
from frames_cli.evolution.propose.lessons import Lesson
from frames_cli.evolution.propose.rewrite import RewriteOutcome
from frames_cli.evolution.round.attribution import Attribution
from frames_cli.evolution.state.runs import run_dir

if TYPE_CHECKING:
    from frames_cli.evolution.state.records import RunState
    from frames_cli.workspace.layout import Workspace


@dataclass(frozen=True)
class GateRecord:
    """The gate's verdict on a child as the round and the candidate keep it.

    Attributes:
        verdict: the verdict.
        lost_left_out: ids of the cases lost on either side and so compared on neither, sorted.
    """

    verdict: GateVerdict
    lost_left_out: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The verdict's JSON with `lost_left_out`."""
        return {**self.verdict.to_json(), "lost_left_out": list(self.lost_left_out)}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> GateRecord:
        """Inverse of `to_json`."""
        return cls(GateVerdict.from_json(obj), tuple(obj.get("lost_left_out", ())))


@dataclass(frozen=True)
class AttributionRecord:
    """One attribution step of a round.

    Attributes:
        attribution: what was attributed, of the candidate it analysed.
        note: the step in one sentence (`Attribution.note()`).
        sub_child: the id of the sub-child made without the implicated rewrites, or None.
    """

    attribution: Attribution
    note: str
    sub_child: str | None = None

    def to_json(self) -> dict[str, Any]:
        """`Attribution.to_json()` with "note" and "sub_child"."""
        return {**self.attribution.to_json(), "note": self.note, "sub_child": self.sub_child}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> AttributionRecord:
        """Inverse of `to_json`."""
        return cls(Attribution.from_json(obj), obj["note"], obj.get("sub_child"))


@dataclass
class RoundRecord:
    """One round's progress and results, filled stage by stage (see loop.STAGES); `done` lists the
    finished stages. Each stage's value is frozen; the record is the round's own, changed as it goes.

    Attributes:
        round: 1-based round number.
        parent: parent candidate id.
        done: finished stage names, in order.
        batches: case ids per diagnoser.
        diagnoses: one result per diagnoser.
        blueprints: the skills that passed the vote (a cost round's: those it condenses).
        rejected: skill → votes, for skills that did not.
        outcomes: one rewrite outcome per blueprint.
        child: the child's candidate id, or None when the round made no child.
        gate: the gate verdict on the child.
        note: why the round made no child (no failures, nothing passed the vote, all rewrites
            dropped, duplicate of an existing candidate), "" otherwise.
        batching: how the batches were formed (diagnose.batching_note); "" in older records.
        kind: "failures" (a child from diagnosed failures) or "cost" (a cost-directed child).
        attribution: the round's attribution steps, in order (stage `attribute`).
    """

    round: int
    parent: str = ""
    done: list[str] = field(default_factory=list)
    batches: list[list[str]] = field(default_factory=list)
    diagnoses: tuple[DiagnoserResult, ...] = ()
    blueprints: tuple[Blueprint, ...] = ()
    rejected: dict[str, int] = field(default_factory=dict)
    outcomes: tuple[RewriteOutcome, ...] = ()
    child: str | None = None
    gate: GateRecord | None = None
    note: str = ""
    batching: str = ""
    kind: str = "failures"
    attribution: list[AttributionRecord] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the checkpoint."""
        return {
            "round": self.round, "parent": self.parent, "done": list(self.done),
            "batches": [list(b) for b in self.batches], "diagnoses": [d.to_json() for d in self.diagnoses],
            "blueprints": [b.to_json() for b in self.blueprints], "rejected": dict(self.rejected),
            "outcomes": [o.to_json() for o in self.outcomes], "child": self.child,
            "gate": self.gate.to_json() if self.gate else None, "note": self.note, "batching": self.batching,
            "kind": self.kind, "attribution": [a.to_json() for a in self.attribution],
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> RoundRecord:
        """Inverse of `to_json` (KeyError or TypeError when a field is missing or malformed)."""
        return cls(
            obj["round"], obj.get("parent", ""), list(obj.get("done", [])), [list(b) for b in obj.get("batches", [])],
            tuple(DiagnoserResult.from_json(d) for d in obj.get("diagnoses", [])),
            tuple(Blueprint.from_json(b) for b in obj.get("blueprints", [])), dict(obj.get("rejected", {})),
            tuple(RewriteOutcome.from_json(o) for o in obj.get("outcomes", [])), obj.get("child"),
            GateRecord.from_json(obj["gate"]) if obj.get("gate") else None, obj.get("note", ""),
            obj.get("batching", ""), obj.get("kind", "failures"),
            [AttributionRecord.from_json(a) for a in obj.get("attribution", [])],
        )


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

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, stored as RunState.checkpoint."""
        return {
            "eval_case_ids": list(self.eval_case_ids), "split": self.split, "picks": dict(self.picks),
            "rounds": [r.to_json() for r in self.rounds], "pending": self.pending.to_json() if self.pending else None,
            "disputes": self.disputes, "case_keys": list(self.case_keys), "max_rounds": self.max_rounds,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], where: Location) -> LoopMemory:
        """Inverse of `to_json`.

        Raises:
            InputError: at `where`, when the checkpoint is missing fields or damaged.
        """
        try:
            data = dict(obj)
            data["rounds"] = [RoundRecord.from_json(r) for r in obj["rounds"]]
            data["pending"] = RoundRecord.from_json(obj["pending"]) if obj.get("pending") else None
            return cls(**data)
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"run checkpoint is damaged ({exc}); start a new run", where) from None

    @classmethod
    def stored(cls, ws: Workspace, state: RunState) -> LoopMemory:
        """The loop memory stored in `state` (InputError when it is damaged or absent)."""
        where = Location(run_dir(ws, state.run_id) / "state.json")
        if not state.checkpoint:
            raise InputError("run has no checkpoint to resume from; start a new run", where)
        return cls.from_json(state.checkpoint, where)


def round_lessons(run_id: str, r: RoundRecord, passed: Iterable[str] = ()) -> list[Lesson]:
    """The lessons of one finished round: every proposal refused before the vote; every change of a
    rewrite that attribution left out of a sub-child (with the cases that implicated it); and, when
    the child failed the gate, every other change of its blueprints (with the categories it broke),
    unless a sub-child that kept it is among `passed` (ids of candidates that passed the gate)."""
    out: list[Lesson] = []
    for d in r.diagnoses:
        for line in d.dropped:
            skill = line.split("`")[1] if line.count("`") >= 2 else ""
            out.append(Lesson(run_id, r.round, "refused", skill, "", f"refused: {line}", tuple(d.case_ids)))
    changes = {bp.skill: bp for bp in r.blueprints}
    lessons, left_out = _left_out(run_id, r, changes)
    out += lessons
    passed = set(passed)
    kept = {
        s for step in r.attribution if step.sub_child in passed for s in step.attribution.changed
        if s not in step.attribution.implicated
    }
    if r.child and r.gate and not r.gate.verdict.passed:
        broken = tuple(r.gate.verdict.failed_categories())
        reason = f"its child {r.child} failed the gate in {', '.join(broken) or 'some category'}"
        for skill, bp in changes.items():
            if skill in left_out or skill in kept:
                continue
            for ch in bp.changes:
                out.append(Lesson(run_id, r.round, "gate", skill, ch.change, reason, ch.case_ids, broken))
    return out


def _left_out(run_id: str, r: RoundRecord, changes: Mapping[str, Blueprint]) -> tuple[list[Lesson], set[str]]:
    """A lesson for every change of a rewrite that attribution left out of a sub-child, with the cases
    that implicated it; and the skills left out."""
    out: list[Lesson] = []
    left_out: set[str] = set()
    for step in r.attribution:
        if not step.sub_child:
            continue
        found = step.attribution
        for skill, cases in found.implicated.items():
            left_out.add(skill)
            reason = (
                f"left out of {found.child} (it failed in {', '.join(found.categories) or 'a must-pass case'}): it "
                f"broke {', '.join(cases)}"
            )
            out += [
                Lesson(
                    run_id, r.round, "left-out", skill, ch.change, reason, ch.case_ids, found.categories, tuple(cases)
                )
                for ch in (changes[skill].changes if skill in changes else ())
            ]
    return out, left_out
