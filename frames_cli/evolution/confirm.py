"""The run's recommendation at its end: the rule of evolution/evidence.py on the run's own
evaluations, with the fresh samples it needs drawn through the run's model client (and cache).

Fresh samples are numbered from max(eval.samples, evolution.gate_max_samples): after every sample
the evaluation and the sequential gate may draw, so they are new draws (a sample's number is in its
cache key), and the same numbers for S0 and every child. They are kept beside the other evaluations
(`<evals_dir>/<id>-fresh.json`), so a resumed end reads them instead of asking again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frames_cli.errors import BudgetExceeded
from frames_cli.evolution.context import Evaluation
from frames_cli.evolution.evidence import Confirmation, Ranked, Recommendation, answered_outcomes, decide
from frames_cli.evolution.gate import CaseOutcome
from frames_cli.evolution.run_ids import BASE_ID

if TYPE_CHECKING:
    from frames_cli.evolution.candidates import Candidates
    from frames_cli.evolution.records import RunState
    from frames_cli.evolution.settings import Settings
    from frames_cli.evolution.splits import Split


def first_fresh_sample(settings: Settings) -> int:
    """The number of the first fresh sample: past every sample an evaluation or the sequential gate draws."""
    return max(settings.samples, settings.gate_max_samples)


def ranked_children(state: RunState) -> list[Ranked]:
    """The run's children that were evaluated on every case (not rejected early), in creation order,
    with their diagnosis-set pass rate (the run's single set E when it does not split)."""
    ranked = []
    for cand in state.candidates:
        if cand.parent_id is None or not cand.evaluated or cand.gain_p is None:
            continue
        scores = cand.sets.get("diagnosis") or {}
        rate = scores.get("pass_rate")
        ranked.append(Ranked(cand.id, float(rate if rate is not None else cand.pass_rate or 0.0), bool(cand.gate_passed)))
    return ranked


def recommend_run(cands: Candidates, state: RunState, split: Split, settings: Settings) -> Recommendation:
    """The recommendation of a finished run (evolution/evidence.py), drawing fresh samples of S0 and
    of each child the walk reaches on the selection cases that were also diagnosed.

    Under the paper's rule (`evolution.recommend_alpha` ≥ 1) nothing is tested or drawn: the member
    is the front's highest pass rate (RunState.best).

    A budget spent while drawing ends the walk there: the children not reached are not tested, and
    the recommendation says what it lacks.
    """
    alpha = settings.recommend_alpha
    if alpha >= 1:
        best = state.best()
        member = best.id if best is not None and best.parent_id is not None else None
        return Recommendation(member, "final" if member else "none", 1.0, rule="paper")
    excluded = cands.excluded()
    selection = set(split.selection) - excluded
    redrawn = sorted(selection & set(split.diagnosis))
    unseen = selection - set(split.diagnosis)
    k, first = settings.samples, first_fresh_sample(settings)
    lacks: list[str] = []

    def fresh(cid: str) -> dict[str, CaseOutcome] | None:
        name = f"{cid}-fresh"
        path = cands.ctx.evals_dir / f"{name}.json"
        if path.is_file():
            ev = cands.evaluation(name)
        else:
            files = cands.files(cid)
            cands.ctx.on_event(f"recommendation: drawing fresh samples of {cid} on the {len(redrawn)} diagnosed selection cases")
            try:
                results = cands.ctx.sample_more(cid, cands.skill_set(cid, files), redrawn, first, k) if cands.ctx.sample_more else None
            except BudgetExceeded:
                lacks.append("fresh samples (the budget was spent)")
                return None
            if results is None:
                lacks.append("fresh samples (this run cannot draw them)")
                return None
            ev = Evaluation(0.0, {}, 0.0, None, results)
            cands.keep_evaluation(name, ev)
        return answered_outcomes(ev.results)

    def confirm(child: Ranked) -> Confirmation:
        base_sel, child_sel = answered_outcomes(cands.evaluation(BASE_ID).results), answered_outcomes(cands.evaluation(child.member).results)
        pair = ({c: o for c, o in base_sel.items() if c in unseen}, {c: o for c, o in child_sel.items() if c in unseen})
        drawn = None
        if redrawn and not lacks:
            base_fresh = fresh(BASE_ID)
            child_fresh = fresh(child.member) if base_fresh is not None else None
            if base_fresh is not None and child_fresh is not None:
                drawn = (base_fresh, child_fresh)
        return Confirmation.of(child.member, child.in_sample, child.gate_passed, pair, drawn, k, alpha)

    children = ranked_children(state)
    if not children:
        made = sum(1 for c in state.candidates if c.parent_id is not None)
        why = ("no child to test: the run made none" if not made else
               f"no child to test: each of its {made} children failed the gate before it was evaluated on every case")
        return Recommendation(None, "none", alpha, note=why)
    rec = decide(children, confirm, alpha, settings.confirm_limit)
    return Recommendation(rec.member, rec.status, rec.alpha, rec.steps, tuple(dict.fromkeys(lacks)), rec.rule)
