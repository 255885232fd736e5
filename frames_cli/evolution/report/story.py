"""A run told round by round, for report.md and the HTML report: what each round did, why a round
made no child, why a candidate is not on the front, what went wrong, and what to do next.

Everything here is read from the run's state.json (RunState and the loop's RoundRecords in
`state.checkpoint`); nothing is recomputed from models or git, except the front after each round,
which is replayed with the same `pareto_front` the loop used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from frames_cli.formatting import pct, plural, tokens
from frames_cli.evolution.compare.front import FrontPoint, dominates, pareto_front
from frames_cli.evolution.decide.recommend import declined
from frames_cli.evolution.state.records import Candidate, RunState


@dataclass(frozen=True)
class RoundStory:
    """One round as a reviewer reads it.

    Attributes:
        round: 1-based round number.
        parent: the parent candidate's id ("" when the round stopped before choosing one).
        failing: the parent's failing cases handed to diagnosers (all batches).
        diagnosers: diagnosers that were called.
        proposals: {diagnoser index: validated proposals}.
        diagnoser_errors: one line per diagnoser call that failed.
        kept: [(skill, votes)] that reached the vote threshold, in blueprint order.
        rejected: {skill: votes} below the threshold.
        rewritten: skills whose rewrite validated.
        dropped: {skill: why its rewrite was dropped}.
        child: the child's id, or None.
        gate: the gate verdict on the child (GateVerdict JSON), or None.
        joined, left: front members that joined / left the front in this round.
        front: the front after the round.
        reason: why the round made no child ("" when it made one).
        attribution: one line per attribution step (evolution/round/attribution.py): what it found and
            the sub-child it made, with that sub-child's gate verdict.
        finished: False for the round in progress when the run stopped.
    """

    round: int
    parent: str
    failing: int
    diagnosers: int
    proposals: dict[int, int]
    diagnoser_errors: list[str]
    kept: list[tuple[str, int]]
    rejected: dict[str, int]
    rewritten: list[str]
    dropped: dict[str, str]
    child: str | None
    gate: dict[str, Any] | None
    joined: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    front: list[str] = field(default_factory=list)
    reason: str = ""
    attribution: list[str] = field(default_factory=list)
    finished: bool = True


def round_records(state: RunState) -> list[tuple[dict[str, Any], bool]]:
    """The RoundRecord JSON of every round in `state.checkpoint`, with True for finished rounds
    (the pending round, if any, last and False)."""
    memory = state.checkpoint or {}
    rounds = [(r, True) for r in memory.get("rounds", [])]
    if memory.get("pending"):
        rounds.append((memory["pending"], False))
    return rounds


def run_story(state: RunState) -> list[RoundStory]:
    """Every round of `state`, oldest first, with the front replayed after each."""
    stories = []
    front = _front(state, upto_round=0)
    gates = {c.id: c.gate_passed for c in state.candidates}
    for record, finished in round_records(state):
        after = _front(state, upto_round=record["round"]) if finished else front
        stories.append(_story(record, finished, front, after, gates))
        front = after
    return stories


def _story(
    r: dict[str, Any], finished: bool, before: list[str], after: list[str], gates: dict[str, bool | None]
) -> RoundStory:
    diagnoses = r.get("diagnoses", [])
    outcomes = r.get("outcomes", [])
    rewritten = [o["skill"] for o in outcomes if o.get("skill_text") is not None]
    dropped = {o["skill"]: ("; ".join(o["errors"][-1]) if o.get("errors") else "the rewrite changed nothing")
               for o in outcomes if o.get("skill_text") is None}
    child = r.get("child")
    reason = ""
    if child is None:
        reason = r.get("note") or ("the run stopped during this round" if not finished else "no child was made")
    return RoundStory(
        round=r["round"],
        parent=r.get("parent", ""),
        failing=sum(len(b) for b in r.get("batches", [])),
        diagnosers=len(diagnoses),
        proposals={d["diagnoser"]: len(d.get("proposals", [])) for d in diagnoses},
        diagnoser_errors=[f"diagnoser {d['diagnoser']}: {d['error']}" for d in diagnoses if d.get("error")],
        kept=[(b["skill"], b.get("votes", 0)) for b in r.get("blueprints", [])],
        rejected=dict(r.get("rejected", {})),
        rewritten=rewritten,
        dropped=dropped,
        child=child,
        gate=r.get("gate"),
        joined=[c for c in after if c not in before],
        left=[c for c in before if c not in after],
        front=after,
        reason=reason,
        attribution=[_step_line(step, gates) for step in r.get("attribution", [])],
        finished=finished,
    )


def _step_line(step: dict[str, Any], gates: dict[str, bool | None]) -> str:
    """One attribution step as a sentence: its note, then the sub-child made and its gate verdict."""
    sub = step.get("sub_child")
    if not sub:
        return f"{step['note']}; no sub-child"
    verdict = {True: "passed the gate", False: "failed the gate", None: "not gated"}[gates.get(sub)]
    return f"{step['note']}; sub-child {sub} without {', '.join(step['implicated'])} {verdict}"


def _point(state: RunState, c: Candidate) -> FrontPoint:
    return FrontPoint(c.id, c.pass_rate or 0.0, c.mean_tokens or 0.0, state.candidates.index(c))


def _front(state: RunState, upto_round: int) -> list[str]:
    """The front over S0 and the gate-passing children made by round `upto_round`, in creation order."""
    accepted = [
        c for c in state.candidates if c.evaluated and c.round <= upto_round and (c.parent_id is None or c.gate_passed)
    ]
    points = pareto_front([_point(state, c) for c in accepted])
    return [p.key for p in sorted(points, key=lambda p: p.order)]


def off_front_reason(state: RunState, cand: Candidate) -> str:
    """Why `cand` is not on the front ("" when it is): the gate's verdict, or who dominates it.

    Dominance is the front's (evolution/compare/front.py): at least the pass rate and at most the mean
    tokens per case, better in one; an equal candidate is left out in favour of the older one.
    """
    if cand.id in state.front:
        return ""
    if not cand.evaluated:
        return "not evaluated yet"
    if cand.parent_id is not None and cand.gate_passed is None:
        return "not gated yet"
    if cand.parent_id is not None and not cand.gate_passed:
        return f"failed the gate: {gate_failures(cand) or 'below the floor'}"
    me = _point(state, cand)
    members = state.front_candidates()
    for other in members:
        if dominates(_point(state, other), me):
            return (f"dominated by {other.id}: pass rate {pct(other.pass_rate)} against {pct(cand.pass_rate)}, "
                    f"{tokens(other.mean_tokens)} against {tokens(cand.mean_tokens)} tokens per case")
    for other in members:
        if _point(state, other).objectives() == me.objectives():
            return f"ties {other.id} (same pass rate and tokens per case); the front keeps the older one"
    return f"not among the run's front members ({', '.join(state.front) or 'none'})"


def gate_failures(cand: Candidate) -> str:
    """The categories below their floor, "cancel 40.0% < floor 47.5%, ..." ("" when none)."""
    return ", ".join(f"{c['category']} {pct(c['child'])} < floor {pct(c['floor'])}"
                     for c in cand.gate_details.get("checks", []) if not c["passed"])


def problems(state: RunState, stories: list[RoundStory]) -> list[str]:
    """What went wrong in the run, one line each: the run's error, failed diagnoser calls, dropped
    rewrites, gate failures. Empty when nothing failed."""
    out = [f"the run failed: {state.error}"] if state.error else []
    for s in stories:
        out += [f"round {s.round}: {e}" for e in s.diagnoser_errors]
        out += [f"round {s.round}: rewrite of {skill} dropped ({why})" for skill, why in s.dropped.items()]
    for cand in state.candidates:
        if cand.parent_id is not None and cand.gate_passed is False:
            out.append(f"{cand.id} failed the gate: {gate_failures(cand) or 'below the floor'}")
    return out


def next_steps(state: RunState, stale: list[str] | None = None) -> list[str]:
    """What the reader should do next, in order (commands quoted with backticks).

    Args:
        stale: skills whose back-linked policy text changed since they were written (see
            workspace/amendments.py); when any, reconciling them comes first.
    """
    from frames_cli.llm.transport.providers import simulator_notice

    spec = state.run_id
    best = state.best()
    steps: list[str] = []
    if stale:
        steps.append(
            f"The policy changed under {plural(len(stale), 'skill')} ({', '.join(stale)}): see `frames status` "
            "for the changed lines; the next `frames evolve` shows them to the diagnosers."
        )
    if state.status == "failed":
        steps.append(f"Fix the error above, then resume the run: `frames evolve --resume {spec}`.")
    elif state.status in ("running", "stopped"):
        steps.append("The run is unfinished: run `frames evolve` again to resume it.")
    if best is not None and best.parent_id is not None:
        steps += [
            f"Review the best candidate, {best.id}: `frames review {spec}/{best.id}` (or the HTML report: "
            f"`frames report {spec}`).",
            f"If you approve it, make it a branch and merge it: `frames promote {spec}/{best.id}`, then "
            f"`git merge frames/{spec}-{best.id}`.",
        ]
        rec = state.recommended()
        if rec is not None and rec.status == "pending":
            wait = int(state.settings.pending["min_new_cases"])
            steps.append(
                f"{best.id}'s gain is significant only on cases its diagnosers saw, so its branch is pending: add "
                f"cases (`frames ingest ...`); once {plural(wait, 'new case')} are in, the next `frames evolve` scores "
                f"S0 and {best.id} on them and says whether they confirm it (`frames status` shows where it stands)."
            )
        if len(state.front) > 1:
            steps.append(
                "Other front members trade pass rate for tokens per case; review them the same way if cost matters "
                "more."
            )
    elif state.status == "finished" and declined(state):
        steps.append(
            "No front member beat S0 by more than noise (the ★ note above). More cases, more selection cases no "
            "diagnoser sees, or `eval.samples` above 1 give the test power; `frames review` shows each member's diff."
        )
    elif state.status == "finished":
        steps.append(
            "No candidate beat S0. Read the reasons per round above; add cases for the failing categories "
            "(`frames ingest ...`), or raise `evolution.max_rounds` or `evolution.diagnosers`, and run `frames evolve` "
            "again."
        )
    if simulator_notice(state.config.get("models", {})):
        steps.append("This run used the simulator: its pass rates say nothing about a real model. Set real models in "
                     "frames.yaml (`models.*`) before acting on them.")
    return steps
