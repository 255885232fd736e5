"""Which front member a run recommends: one whose gain over S0 on the selection set is more than noise.

The front's highest pass rate is the maximum over every child the run made, each scored on the
same selection set, so it is biased upwards (the winner's curse; the figures that showed it on
the bundled example are in docs/DECISIONS.md). A member is therefore recommended (★ in the deploy menu, the review branch)
only when the exact one-sided paired test of paired_test.upper_p_value, with the child's passes in
S0's place, finds its gain over S0 significant at α / m, where m is the number of children the run
evaluated (Bonferroni: the front is chosen from all of them on the same cases; Dunn, JASA 56 (1961)
52–64). `evolution.recommend_alpha` is α; 1 gives the paper's rule (the highest pass rate).

The test reads only the selection cases that are not in the diagnosis set (the categories split,
not kept whole): a child is written for the cases S0 failed, and such a case, drawn again, tends to
pass whatever the change (regression to the mean), so the exchangeability the test needs does not
hold on diagnosed cases. With no such case (every category kept whole, or the paper's single set E)
no gain can be tested, and S0 stays the best member unless α is 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from frames_cli.evolution.paired_test import upper_p_value

if TYPE_CHECKING:
    from frames_cli.evolution.gate import CaseOutcome
    from frames_cli.evolution.records import Candidate, RunState


def gain_p_value(base: Mapping[str, CaseOutcome], child: Mapping[str, CaseOutcome], k: int) -> float:
    """The one-sided p-value of "the child passes more often than S0" over the cases both were scored on.

    `base` and `child` map case id → outcome (evolution/gate.outcomes_from_results); each side's
    first `k` samples of a case are compared (the gate's extra samples of some categories are left
    out, so every case weighs the same). Cases only one side has (lost, or left unevaluated by early
    rejection) are not compared. 1.0 when no case differs.

    Raises:
        ValueError: k < 1.
    """
    strata = []
    for case_id in sorted(base.keys() & child.keys()):
        a, b = base[case_id].passes[:k], child[case_id].passes[:k]
        if len(a) == k and len(b) == k:
            strata.append((sum(b), sum(a)))
    return upper_p_value(strata, k)


def blind_cases(state: RunState) -> int | None:
    """How many selection cases no diagnoser saw (what `gain_p_value` compares); None when the run
    recorded no split."""
    split = state.checkpoint.get("split") or {}
    if "selection" not in split:
        return None
    return len(set(split["selection"]) - set(split.get("diagnosis", [])))


def declined(state: RunState) -> bool:
    """True when the recommendation rule kept S0 although a child is on the front (α below 1)."""
    best = state.best()
    return (state.recommend_alpha < 1 and best is not None and best.parent_id is None
            and any(c.parent_id is not None for c in state.front_candidates()))


def recommendation_note(state: RunState) -> str | None:
    """One line on why the best member is what it is, for the deploy menu and the reports; None when
    the run uses the paper's rule (α = 1) or made no child."""
    alpha, bar, children = state.recommend_alpha, state.recommendation_bar(), state.children_evaluated()
    if alpha >= 1 or not children:
        return None
    blind = blind_cases(state)
    where = "the selection set" if blind is None else f"the {blind} selection cases no diagnoser saw"
    test = (f"★ needs a gain over S0 on {where} with p ≤ {alpha:g} / {children} = {bar:.4g} "
            "(exact one-sided paired test, Bonferroni over the children evaluated)")
    if blind == 0:
        return (f"{test}; every selection case was also diagnosed (categories kept whole, or the single set E), so no "
                "gain can be tested and S0 stays the recommendation; `evolution.recommend_alpha: 1` is the paper's rule.")
    best = state.best()
    if best is not None and best.parent_id is not None:
        return f"{test}; {best.id} has p = {best.gain_p:.4g}."
    rivals = [c for c in state.front_candidates() if c.parent_id is not None and c.gain_p is not None]
    if not rivals:
        return f"{test}; no member besides S0 is on the front, so S0 stays the recommendation."
    top = min(rivals, key=lambda c: (c.gain_p, -(c.pass_rate or 0.0)))
    return (f"{test}. No front member has one (smallest: {top.id}, p = {top.gain_p:.4g}), so S0 stays the "
            "recommendation and no review branch is made; frames review still shows every member's diff, and more "
            "selection cases or eval.samples above 1 give the test power.")


def member_line(state: RunState, cand: Candidate) -> str | None:
    """One line for `frames review`: the candidate's gain test against the recommendation bar, and
    whether it is the run's best member; None for S0, under the paper's rule (α = 1) or without a p."""
    if cand.parent_id is None or state.recommend_alpha >= 1 or cand.gain_p is None:
        return None
    best, bar, blind = state.best(), state.recommendation_bar(), blind_cases(state)
    where = "the selection set" if blind is None else f"the {blind} selection cases no diagnoser saw"
    verdict = ("recommended: it is the run's best member" if best is not None and best.id == cand.id else
               f"not recommended (the run's best member is {'S0' if best is None or best.parent_id is None else best.id})")
    return f"p = {cand.gain_p:.4g} on {where}, against a bar of {state.recommend_alpha:g} / {state.children_evaluated()} = {bar:.4g}: {verdict}"
