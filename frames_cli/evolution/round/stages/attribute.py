"""Stage `attribute`: when the round's child failed the gate (or is off the front) and changed several
skills, its broken cases attributed to the rewrites they loaded (evolution/round/attribution.py), and
the sub-child without the implicated rewrites made, evaluated, gated and committed like any child.

One of the two stages that write: the sub-child's evaluation, commit and notes, and the analysed
candidate's `attribution` record (changed in place; the caller saves). `attribution_step` does one
step and returns an `AttributionStep`, or None when there is nothing to attribute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from frames_cli.evolution.round import commit as commits
from frames_cli.evolution.round.attribution import (
    Attribution,
    attribute,
    catalog_changes,
    dominated_categories,
    loaded_skills,
)
from frames_cli.evolution.round.record import AttributionRecord
from frames_cli.evolution.round.stages.commit import commit_child
from frames_cli.evolution.round.stages.evaluate import evaluate_candidate, twin_of
from frames_cli.evolution.round.stages.gate import GatedChild
from frames_cli.evolution.state.records import Candidate
from frames_cli.evolution.state.round_events import AttributionStep as AttributionStepEvent
from frames_cli.evolution.state.round_events import EvaluatingSubChild, Gated, SubChildTwin
from frames_cli.evolution.state.run_ids import candidate_id

if TYPE_CHECKING:
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.evolution.round.evaluations import EvaluationLog
    from frames_cli.evolution.round.outcomes import RunOutcomes
    from frames_cli.evolution.round.record import RoundRecord
    from frames_cli.evolution.round.stages.gate import ChildGate
    from frames_cli.evolution.state.records import RunState
    from frames_cli.evolution.state.settings import Settings


@dataclass(frozen=True)
class AttributionStep:
    """One attribution step of a round.

    Attributes:
        record: the step as the round keeps it.
        fresh: whether the sub-child is a new front member.
    """

    record: AttributionRecord
    fresh: bool


def attribution_step(
    ctx: RunContext, view: RunOutcomes, log: EvaluationLog, gate: ChildGate, settings: Settings, state: RunState,
    r: RoundRecord, analysed: str,
) -> AttributionStep | None:
    """Attribute candidate `analysed` (round `r`'s child or the sub-child of its previous step) and make
    its sub-child, judged by the run's `gate`; None when there is nothing to attribute."""
    cand = state.candidate(analysed)
    found = attribution_of(view, state, r, cand)
    if not found:
        return None
    ctx.on_event(AttributionStepEvent(r.round, found.note()))
    sub_child, fresh = (
        _sub_child(ctx, view, log, gate, settings, state, r, found) if found.sub_child_possible else (None, False)
    )
    step = AttributionRecord(found, found.note(), sub_child)
    cand.attribution = step.to_json()
    commits.add_metrics_note(ctx.store, state, cand)
    return AttributionStep(step, fresh)


def attribution_of(view: RunOutcomes, state: RunState, r: RoundRecord, cand: Candidate) -> Attribution | None:
    """The attribution of `cand` (the round's child or a sub-child), or None when there is nothing
    to attribute: it joined the front, or it changed fewer than two skills."""
    if len(cand.changed_skills) < 2 or cand.id in state.front:
        return None
    store = view.store
    # Disputed cases count nowhere; a case lost on either side says nothing of the rewrites.
    lost = view.lost(r.parent) | view.lost(cand.id)
    parent, child = view.counted(r.parent, lost), view.counted(cand.id, lost)
    if cand.gate_passed:
        why, categories, mp = (
            "dominated", dominated_categories(state.candidate(r.parent).per_category, cand.per_category), [],
        )
    else:
        why, categories, mp = "gate", cand.failed_categories(), cand.gate_details.get("must_pass_broken", [])
    catalog = catalog_changes(
        store.parent_skills(r), store.skill_set(cand.id, store.files(cand.id)), cand.changed_skills
    )
    loaded = loaded_skills(store.evaluation(cand.id).results)
    return attribute(cand.id, why, categories, parent, child, loaded, cand.changed_skills, catalog, mp)


def _sub_child(
    ctx: RunContext, view: RunOutcomes, log: EvaluationLog, gate: ChildGate, settings: Settings, state: RunState,
    r: RoundRecord, found: Attribution,
) -> tuple[str | None, bool]:
    """Evaluate, gate and commit the sub-child that keeps only `found.kept` of the round's rewrites;
    returns (its id, whether it is a new front member), or (None, False) when it equals an existing
    candidate."""
    store = view.store
    changes = {p: d for p, d in store.child_changes(r).items() if p.split("/")[1] in found.kept}
    files = {**store.files(r.parent), **changes}
    twin = twin_of(state, store, files)
    if twin:
        ctx.on_event(SubChildTwin(r.round, tuple(found.implicated), twin))
        return None, False
    cid = candidate_id(r.round, 1 + sum(c.round == r.round for c in state.candidates))
    ctx.on_event(EvaluatingSubChild(r.round, cid, found.child, tuple(found.implicated)))
    log.keep(cid, evaluate_candidate(ctx, store, view, settings, cid, files, r.parent))
    gated = gate.judge(GatedChild(view, cid, lambda: files, r.parent))
    ctx.on_event(Gated(r.round, cid, gated.verdict.passed, gated.verdict.summary()))
    sub = Candidate(
        cid, "", r.parent, r.round, cut_from=found.child, left_out={s: list(c) for s, c in found.implicated.items()}
    )
    return cid, commit_child(ctx, view, settings, state, r, sub, changes, gated)
