"""The run's recommendation at its end: the rule of evolution/compare/evidence.py on the run's own
evaluations, with the fresh samples it needs drawn through the run's model client (and cache).

Fresh samples are numbered from max(eval.samples, evolution.gate_max_samples): after every sample
the evaluation and the sequential gate may draw, so they are new draws (a sample's number is in the
model cache's and a provider batch's key), and the same numbers for S0 and every child. With a
provider at temperature 0 a fresh draw is often the same answer; the correction for regression to
the mean then has little to correct, and the test stays valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from frames_cli.errors import BudgetExceeded, FramesError
from frames_cli.evolution.round.context import Evaluation
from frames_cli.evolution.compare.evidence import (
    Confirmation,
    Ranked,
    Recommendation,
    answered_outcomes,
    decide,
    pass_rate,
)
from frames_cli.evolution.state.events import RecommendationStep
from frames_cli.evolution.state.run_ids import BASE_ID

if TYPE_CHECKING:
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.evolution.round.evaluations import EvaluationLog
    from frames_cli.evolution.state.records import RunState
    from frames_cli.evolution.state.settings import Settings
    from frames_cli.evolution.state.splits import Split


def first_fresh_sample(settings: Settings) -> int:
    """The number of the first fresh sample: past every sample an evaluation or the sequential gate draws."""
    return max(settings.samples, settings.gate_max_samples)


class _BudgetSpent(Exception):
    """The budget ran out while the recommendation drew samples (its children cannot all be ranked or tested)."""


def recommend_run(
    log: EvaluationLog, ctx: RunContext, excluded: set[str], state: RunState, split: Split, settings: Settings
) -> Recommendation:
    """The recommendation of a finished run (evolution/compare/evidence.py).

    Every child of the run is ranked by its diagnosis-set pass rate, a child the gate rejected early
    included: its evaluation is first completed on the cases early rejection skipped (samples
    0…k−1, the numbers its evaluation would have drawn), because which children stop early depends
    on their selection results, and a ranking that left them out would read the samples the test
    reads. Fresh samples of S0 and of each child the walk reaches are then drawn on the selection
    cases that were also diagnosed. Both are kept beside the evaluations (`<id>-rest.json`,
    `<id>-fresh.json`), so a resumed end asks for nothing again.

    Under the paper's rule (`evolution.recommend_alpha` ≥ 1) nothing is tested or drawn: the member
    is the front's highest pass rate (RunState.best). When the budget runs out while drawing, nothing
    is decided: the recommendation is "none" with `budget_spent` set, and says so.
    """
    alpha = settings.recommend_alpha
    if alpha >= 1:
        best = state.best()
        member = best.id if best is not None and best.parent_id is not None else None
        return Recommendation(member, "final" if member else "none", 1.0, rule="paper")
    selection = set(split.selection) - excluded
    diagnosis = set(split.diagnosis) - excluded
    draws = _Draws(
        log, ctx, settings.samples, first_fresh_sample(settings), alpha, excluded, selection - diagnosis,
        sorted(selection & diagnosis),
    )
    children = [c for c in state.candidates if c.parent_id is not None and c.evaluated]
    if not children:
        return Recommendation(None, "none", alpha, note="no child to test: the run made none")
    try:
        ranked = [
            Ranked(
                c.id,
                pass_rate(
                    {cid: o for cid, o in answered_outcomes(draws.complete(c.id)).items() if cid in diagnosis},
                    settings.samples,
                ),
                bool(c.gate_passed),
            )
            for c in children
        ]
        return decide(ranked, draws.confirm, alpha, settings.confirm_limit)
    except _BudgetSpent:
        return Recommendation(
            None, "none", alpha, budget_spent=True,
            note="not decided: the budget ran out while the recommendation drew the samples it tests on",
        )


@dataclass
class _Draws:
    """The samples the recommendation reads, drawn once and kept (`<id>-rest`, `<id>-fresh`), and its test."""

    log: EvaluationLog
    ctx: RunContext
    k: int
    first: int  # the number of the first fresh sample
    alpha: float
    excluded: set[str]
    unseen: set[str]  # selection cases no diagnoser saw
    redrawn: list[str]  # selection cases that were also diagnosed: drawn afresh

    def drawn(self, cid: str, name: str, case_ids: list[str], start: int, why: str) -> list[dict]:
        """The results kept as `name`, else `k` samples of `case_ids` from sample `start` drawn for `cid`."""
        store, ctx = self.log.store, self.ctx
        if store.has_evaluation(name):
            return store.evaluation(name).results
        if ctx.sample_more is None:
            raise FramesError("the recommendation needs more samples, but this run cannot draw them")
        ctx.on_event(RecommendationStep(why))
        try:
            results = ctx.sample_more(cid, store.skill_set(cid, store.files(cid)), case_ids, start, self.k)
        except BudgetExceeded:
            raise _BudgetSpent from None
        self.log.keep(name, Evaluation(0.0, {}, 0.0, None, results))
        return results

    def complete(self, cid: str) -> list[dict]:
        """`cid`'s results, completed on the cases its early rejection skipped."""
        ev = self.log.store.evaluation(cid)
        skipped = [c for c in (ev.early_stop or {}).get("skipped", []) if c not in self.excluded]
        if not skipped:
            return ev.results
        return ev.results + self.drawn(
            cid, f"{cid}-rest", skipped, 0, f"completing {cid} on the {len(skipped)} cases its early rejection skipped"
        )

    def confirm(self, child: Ranked) -> Confirmation:
        """The test of `child` against S0: on the unseen cases, and on fresh samples of the redrawn ones."""
        base, own = answered_outcomes(self.complete(BASE_ID)), answered_outcomes(self.complete(child.member))
        unseen = self.unseen
        pair = ({c: o for c, o in base.items() if c in unseen}, {c: o for c, o in own.items() if c in unseen})
        fresh = None
        redrawn, first = self.redrawn, self.first
        if redrawn:
            why = "drawing fresh samples of {} on the {} diagnosed selection cases"
            fresh = (
                answered_outcomes(
                    self.drawn(BASE_ID, f"{BASE_ID}-fresh", redrawn, first, why.format(BASE_ID, len(redrawn)))
                ),
                answered_outcomes(
                    self.drawn(
                        child.member, f"{child.member}-fresh", redrawn, first, why.format(child.member, len(redrawn))
                    )
                ),
            )
        return Confirmation.of(child.member, child.in_sample, child.gate_passed, pair, fresh, self.k, self.alpha)
