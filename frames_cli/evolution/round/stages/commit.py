"""Stage `commit`: an evaluated, gated child scored, explained and committed under the run's refs
(evolution/round/commit.py); an accepted child joins the regression pool and maybe the front.

One of the two stages that write: the child's commit and git note, the front's refs, and the child's
record in the run state (`RunState.candidates`, `front`, changed in place; the caller saves).
Returns whether the child is a new front member.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from frames_cli.evolution.round import commit as commits
from frames_cli.evolution.round.scores import front_ids, score_candidate
from frames_cli.evolution.round.stages.evaluate import skill_names
from frames_cli.evolution.state.records import FailureNote

if TYPE_CHECKING:
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.evolution.round.outcomes import RunOutcomes
    from frames_cli.evolution.round.record import GateRecord, RoundRecord
    from frames_cli.evolution.state.records import Candidate, RunState
    from frames_cli.evolution.state.settings import Settings
    from frames_cli.gitstore.store import GitStore


def commit_child(
    ctx: RunContext, view: RunOutcomes, settings: Settings, state: RunState, r: RoundRecord, child: Candidate,
    changes: Mapping[str, bytes], gate: GateRecord | None,
) -> bool:
    """Score, explain and commit `child`, an evaluated child of round `r`'s parent made of the parent's files
    and `changes`, gated with verdict `gate`; True when it is a new front member."""
    store = view.store
    evaluation, parent = store.evaluation(child.id), state.candidate(r.parent)
    score_candidate(child, evaluation, view, settings.samples)
    _explain(ctx, view, settings, child, r, changes, gate)
    models = state.config["models"]
    child.commit = commits.commit_candidate(ctx.store, state, child, r, dict(changes), models)
    child.diff_size = ctx.store.diff_stat(parent.commit, child.commit).lines_changed
    state.candidates.append(child)
    before = set(state.front)
    if child.gate_passed:
        ctx.accept(child.id, child.commit, store.skill_set(child.id, {**store.files(parent.id), **changes}))
    update_front(ctx.store, state)
    commits.add_metrics_note(ctx.store, state, child)
    return child.id in state.front and child.id not in before


def update_front(git: GitStore, state: RunState) -> None:
    """Recompute the front over S0 and the accepted children, keep it in creation order (the order the
    round-robin selector cycles) and mirror it under refs/frames/runs/<run>/front/."""
    state.front = front_ids(state)
    commits.publish_front(git, state)


def _explain(
    ctx: RunContext, view: RunOutcomes, settings: Settings, child: Candidate, r: RoundRecord,
    changes: Mapping[str, bytes], gate: GateRecord | None,
) -> None:
    """Fill in what a reviewer needs: gate verdict, blueprints, motivating failures, drops, votes."""
    child.gate_passed = bool(gate and gate.verdict.passed)
    child.gate_details = gate.to_json() if gate else {}
    child.changed_skills = skill_names(changes)
    child.blueprints = [b.to_json() for b in r.blueprints if b.skill in child.changed_skills]
    child.motivating_case_ids = sorted({c for b in child.blueprints for ch in b["changes"] for c in ch["case_ids"]})
    failing = view.store.evaluation(r.parent).failing()
    child.failures = [
        FailureNote(cid, failing[cid]["category"], failing[cid]["reason"], ctx.cases[cid].diagnosis.symptom)
        for cid in child.motivating_case_ids
        if cid in failing
    ]
    child.dropped = {
        o.skill: "; ".join(o.errors[-1]) if o.errors else "the rewrite changed nothing"
        for o in r.outcomes
        if o.skill not in child.changed_skills and o.skill not in child.left_out
    }
    child.dropped_proposals = [line for d in r.diagnoses for line in d.dropped]
    child.policy_changes = [c for o in r.outcomes if o.skill in child.changed_skills for c in o.policy_changes]
    child.votes_needed, child.diagnosers = settings.vote_threshold, settings.diagnosers
