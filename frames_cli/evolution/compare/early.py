"""Early rejection: the order that lets the gate decide a child early, and the test that its rejection is certain.

A child is rejected before its evaluation ends only when the gate rejects it even if every case not
yet evaluated passed every sample. Gates are monotone (a child that passes more never gets a worse
verdict: evolution/compare/gate.py), so that best completion rejecting means every completion rejects: the
decision is exactly the full evaluation's. A child that passes is always evaluated in full.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from frames_cli.evaluation.runner import CaseResult
from frames_cli.evaluation.staged import Staging, StopRule
from frames_cli.evolution.compare.gate import Gate
from frames_cli.evolution.compare.verdict import CaseOutcome, GateVerdict, Outcomes, outcomes_from_results


def decisive_order(baseline: Outcomes, pending: Sequence[str], tolerance: float, done: Outcomes | None = None,
                   parent: Outcomes | None = None) -> list[str]:
    """The `pending` case ids in the order that decides a rejection soonest, given the child's results so far.

    First the must-pass cases S0 passed (one failure rejects). Then category by category, since a
    category is decided only once most of its cases are known: the category whose floor the child
    is predicted to clear by the least goes first, its results so far counted as they are and its
    pending cases as the parent (the child's closest relative; S0 when None) did on them. Within a
    category the cases the parent failed go first (the child most likely fails them too), then
    those S0 passed most often. Categories S0 never passed (floor 0) cannot fail and come last.
    Ties keep `pending` order.
    """
    done = done or {}
    guide = parent if parent is not None else baseline
    waiting = set(pending)
    slack: dict[str, float] = {}
    for cid, o in baseline.items():
        if cid in done:
            got = done[cid].passed
        elif cid in waiting and cid in guide:
            got = guide[cid].passed
        else:
            got = 0
        slack[o.category] = slack.get(o.category, 0.0) + got - (1.0 - tolerance) * o.passed
    s0_passes: dict[str, int] = {}
    for o in baseline.values():
        s0_passes[o.category] = s0_passes.get(o.category, 0) + o.passed

    def key(item: tuple[int, str]) -> tuple:
        index, cid = item
        o = baseline.get(cid)
        if o is None or s0_passes[o.category] == 0:
            return (2, 0.0, "", 0, 0, index)
        if o.must_pass and o.passed:
            return (0, 0.0, "", 0, 0, index)
        guessed = guide[cid].passed if cid in guide else 0
        return (1, slack[o.category], o.category, guessed, -o.passed, index)

    return [cid for _, cid in sorted(enumerate(pending), key=key)]


def certain_rejection(gate: Gate, baseline: Outcomes, done: Outcomes, pending: Iterable[str]) -> GateVerdict | None:
    """The gate's verdict when the child is rejected whatever the `pending` cases give; None otherwise.

    The verdict is the one on the best completion (every pending case passing every sample), so its
    failed categories and broken must-pass cases fail in every completion. Its case lists
    (`pass_to_fail`, `fail_to_pass`) name evaluated cases only: a pending case "better than S0" in
    the best completion is an assumption, not a result.
    """
    best = dict(done)
    for cid in pending:
        base = baseline.get(cid)
        if base is not None:  # cases the gate does not judge (diagnosis set only) cannot change it
            best[cid] = CaseOutcome(base.category, (True,) * len(base.passes), base.must_pass)
    verdict = gate.check(baseline, best)
    if verdict.passed:
        return None
    assumed = set(pending)
    checks = [
        dataclasses.replace(c, fail_to_pass=[cid for cid in c.fail_to_pass if cid not in assumed])
        for c in verdict.checks
    ]
    return dataclasses.replace(verdict, checks=checks)


def cases_to_settle(
    gate: Gate, baseline: Outcomes, done: Outcomes, pending: Sequence[str], parent: Outcomes
) -> list[str]:
    """The `pending` cases a child rejected early must still be evaluated on so that attribution
    (evolution/round/attribution.py) analyses it as it would the full evaluation, in `pending` order.

    The decision is certain already; what is not is which categories fail (attribution analyses
    those, and the rewriter is later told them in the left-out lessons) and which of their cases
    went from pass to fail against the parent. A category fails in the full evaluation when it
    fails with every pending case passing (best completion), and passes when it passes with every
    pending case failing (worst completion): the gate is monotone in the child's passes and a
    category's check reads its own cases only. So the cases needed are: every pending case of a
    category neither completion decides; every pending must-pass case S0 passed (it may break);
    and every pending case the parent (its outcomes on every case attribution counts) passed in a
    category that fails or is undecided. A case the parent never passed cannot break.
    """
    def completion(passed: bool) -> dict[str, CaseOutcome]:
        filled = dict(done)
        for cid in pending:
            base = baseline.get(cid)
            if base is not None:
                filled[cid] = CaseOutcome(base.category, (passed,) * len(base.passes), base.must_pass)
        return filled

    best = {c.category: c.passed for c in gate.check(baseline, completion(True)).checks}
    worst = {c.category: c.passed for c in gate.check(baseline, completion(False)).checks}
    undecided = {cat for cat, ok in best.items() if ok and not worst.get(cat, False)}
    analysed = undecided | {cat for cat, ok in best.items() if not ok}
    needed = []
    for cid in pending:
        base = baseline.get(cid)
        if base is not None and (base.category in undecided or (base.must_pass and base.passed)):
            needed.append(cid)
        elif cid in parent and parent[cid].passed and parent[cid].category in analysed:
            needed.append(cid)
    return needed


def rejection_rule(gate: Gate, baseline: Outcomes, must_pass: set[str]) -> StopRule:
    """A `staged.StopRule` that stops once `certain_rejection` holds, giving the verdict's summary as the reason.

    A case the child lost is left out of both sides, as the gate
    leaves it out (evolution/round/stages/gate.EarlyRejected).
    """

    def stop(results: list[CaseResult], pending: list[str]) -> str | None:
        lost = {r.case_id for r in results if r.lost}
        compared = {cid: o for cid, o in baseline.items() if cid not in lost}
        verdict = certain_rejection(gate, compared, _outcomes(results, must_pass), pending)
        return None if verdict is None else _reason(verdict)

    return stop


def _reason(verdict: GateVerdict) -> str:
    parts = [f"must-pass case {cid} failed" for cid in verdict.must_pass_broken]
    parts += [f"{c.category}: {c.why}" for c in verdict.checks if not c.passed]
    return "; ".join(parts) + ", whatever the remaining cases give"


@dataclass(frozen=True)
class EarlyRejection:
    """What a child's evaluation needs to stop early: the gate, S0's and the parent's outcomes, the must-pass ids and ε.

    Attributes:
        parent: the parent's outcomes on the gate's cases (guides the order), or None.
        analysed_parent: the parent's outcomes on every case attribution counts, when attribution
            may analyse this child (it changed several skills); None when it will not.
    """

    gate: Gate
    baseline: Outcomes
    must_pass: set[str]
    tolerance: float
    parent: Outcomes | None = None
    analysed_parent: Outcomes | None = None

    def staging(self, batch: int) -> Staging:
        """The decisive order (following the results so far), the rejection rule, `batch` cases per
        stage, and once stopped the cases attribution still needs (`cases_to_settle`; none when
        `analysed_parent` is None)."""

        def order(results: list[CaseResult], pending: list[str]) -> list[str]:
            return decisive_order(
                self.baseline, pending, self.tolerance, _outcomes(results, self.must_pass), self.parent
            )

        def settle(results: list[CaseResult], pending: list[str]) -> list[str]:
            if self.analysed_parent is None:  # nothing reads the failing categories of an unanalysed child
                return []
            lost = {r.case_id for r in results if r.lost}
            compared = {cid: o for cid, o in self.baseline.items() if cid not in lost}
            return cases_to_settle(
                self.gate, compared, _outcomes(results, self.must_pass), pending, self.analysed_parent
            )

        return Staging(order, rejection_rule(self.gate, self.baseline, self.must_pass), batch, settle)


def _outcomes(results: list[CaseResult], must_pass: set[str]) -> dict[str, CaseOutcome]:
    """The child's outcomes so far; a case with a lost result has none (it is compared on neither side)."""
    lost = {r.case_id for r in results if r.lost}
    return outcomes_from_results(
        (
            {"case_id": r.case_id, "category": r.category, "sample": r.sample, "passed": r.passed} for r in results
            if r.case_id not in lost
        ),
        must_pass,
    )
