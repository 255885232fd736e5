"""Stage `evaluate`: the round's child (the parent's files with the accepted rewrites) evaluated on E,
blind; with early rejection on, its evaluation stops once the gate must reject it
(evolution/compare/early.py).

Returns a `Child`: its id and evaluation, or the note why the round makes none (the rewrites changed
nothing, or the child equals a candidate the run has). The caller keeps the evaluation
(evolution/round/evaluations.py); this module writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from frames_cli.evolution.compare.early import EarlyRejection
from frames_cli.evolution.state.round_events import EvaluatingChild
from frames_cli.evolution.state.run_ids import BASE_ID, candidate_id

if TYPE_CHECKING:
    from frames_cli.evolution.propose.rewrite import RewriteOutcome
    from frames_cli.evolution.round.candidate_store import CandidateStore
    from frames_cli.evolution.round.context import Evaluation, RunContext
    from frames_cli.evolution.round.outcomes import RunOutcomes
    from frames_cli.evolution.state.records import RunState
    from frames_cli.evolution.state.settings import Settings


@dataclass(frozen=True)
class Child:
    """The round's child, or why there is none.

    Attributes:
        id: its candidate id, None when the round makes no child.
        evaluation: its evaluation on E (None with `id`).
        note: the round's note after this stage (why there is no child, else the note it had).
        files: its skills/ files (path -> bytes), {} with no child.
    """

    id: str | None
    evaluation: Evaluation | None = None
    note: str = ""
    files: Mapping[str, bytes] = field(default_factory=dict)


def make_child(
    ctx: RunContext, store: CandidateStore, view: RunOutcomes, settings: Settings, state: RunState,
    round_no: int, parent: str, changes: Mapping[str, bytes], outcomes: Sequence[RewriteOutcome], note: str,
) -> Child:
    """Build and evaluate round `round_no`'s child of `parent` from its planned file `changes`; `outcomes`
    are the round's rewrites and `note` the round's note so far."""
    if not changes:
        # Name the skills whose accepted rewrite came back as it was (report.md lists them as
        # "Rewritten", so the note must say the text did not change).
        same = [o.skill for o in outcomes if o.skill_text is not None]
        detail = f": the rewriter returned {', '.join(same)} exactly as they were" if same else ""
        return Child(None, note=note or f"the rewrites changed nothing{detail}")
    files = {**store.files(parent), **changes}
    twin = twin_of(state, store, files)
    if twin:
        return Child(None, note=f"the child is identical to {twin}")
    cid = candidate_id(round_no, 1)
    ctx.on_event(EvaluatingChild(round_no, cid, tuple(skill_names(changes))))
    return Child(cid, evaluate_candidate(ctx, store, view, settings, cid, files, parent), note, files)


def evaluate_candidate(
    ctx: RunContext, store: CandidateStore, view: RunOutcomes, settings: Settings, cid: str,
    files: Mapping[str, bytes], parent: str,
) -> Evaluation:
    """The evaluation on E of child (or sub-child) `cid` of `parent`, made of `files`; with early
    rejection on, it stops once the gate must reject it."""
    early = _early(ctx, view, settings, parent, files)
    return ctx.evaluate(cid, store.skill_set(cid, files), list(view.eval_case_ids), early)


def _early(
    ctx: RunContext, view: RunOutcomes, settings: Settings, parent: str, files: Mapping[str, bytes]
) -> EarlyRejection | None:
    """What lets the child (made of `files`) stop its evaluation once the gate must reject it
    (None when turned off).

    S0's lost cases are left out of its outcomes, as in the gate; the rule leaves out the
    child's lost cases as they come (evolution/compare/early.rejection_rule). When attribution may
    analyse the child (it is on and the child changes several skills), the parent's outcomes
    on the cases attribution counts go along, so that the cases it needs are evaluated after
    the stop (evolution/compare/early.cases_to_settle)."""
    if not settings.early_rejection:
        return None
    must_pass = view.must_pass()
    analysed = view.counted(parent, view.lost(parent)) if view.attributable(parent, files) else None
    return EarlyRejection(
        ctx.gate, view.selection(BASE_ID, view.lost(BASE_ID)), must_pass, settings.tolerance, view.selection(parent),
        analysed,
    )


def twin_of(state: RunState, store: CandidateStore, files: Mapping[str, bytes]) -> str | None:
    """The id of the first candidate whose skills/ files are `files`, or None."""
    return next((c.id for c in state.candidates if store.files(c.id) == files), None)


def skill_names(changes: Mapping[str, bytes]) -> list[str]:
    """Skill names of `skills/<name>/SKILL.md` paths, sorted."""
    return sorted({path.split("/")[1] for path in changes})
