"""Drawing what the sequential gate's looks ask for, until it decides (`sequential_verdict`).

`SequentialGate.decide` (evolution/compare/sequential.py) replays the looks on the samples drawn so
far and names the samples the next look needs; this module draws them, only what a side lacks. With
early rejection a look draws the child's samples a few cases at a time, in the order that decides
its rejection soonest (`look_order`), and stops once the rejection is certain whatever the samples
not drawn give (`certain_rejection`, on the child's best completion; `to_settle`: the cases the
verdict's records still depend on).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from frames_cli.evolution.compare.verdict import GateVerdict
from frames_cli.evolution.compare.sequential import Decision, Drawn, SequentialGate


#: (side: "baseline" or "child", case ids, first sample, samples) → draws them; the next `decide` sees them.
Draw = Callable[[str, list[str], int, int], None]


def sequential_verdict(seq: SequentialGate, read: Callable[[], tuple[Drawn, Drawn]], draw: Draw,
                       stage: int = 0, settle: bool = False) -> GateVerdict:
    """Decide, drawing what each look needs, until the gate is decided.

    `read` gives both sides' samples so far (S0's, the child's); `draw` adds samples to a side. Only
    the samples a side lacks are drawn (S0's drawn for an earlier child are reused), as distinct
    samples: indices from the side's current count on. The verdict's `sequential["drawn"]` counts
    the case-samples drawn for this gate per side.

    With `stage` > 0 (early rejection), a look draws the child's samples `stage` cases at a time,
    in `look_order`, S0's first, and stops once `certain_rejection` holds: the
    decision is the full draw's; `sequential["stopped"]` records the look, the cases whose samples
    were not drawn and why. With `settle`, the cases `to_settle` names are drawn before it stops,
    so the verdict's failing categories and broken must-pass cases are the full draw's too.

    Raises:
        RuntimeError: a draw added none of the samples asked for (the evaluation cannot go on).
    """
    drawn = {"baseline": 0, "child": 0}
    asked: tuple | None = None
    while True:
        baseline, child = read()
        decision = seq.decide(baseline, child)
        if decision.verdict is not None:
            record = {**(decision.verdict.sequential or {}), "drawn": drawn}
            return dataclasses.replace(decision.verdict, sequential=record)
        need = decision.need
        if stage and need:
            staged = _staged(seq, baseline, child, need, stage, settle)
            if isinstance(staged, tuple):
                early, stopped = staged
                return dataclasses.replace(
                    early, sequential={**(early.sequential or {}), "drawn": drawn, "stopped": stopped}
                )
            need = staged
        if (need, decision.baseline_need) == asked:
            raise RuntimeError("the sequential gate's draw added none of the samples it asked for")
        asked = (need, decision.baseline_need)
        if not _draw_lacking(draw, decision, need, baseline, child, drawn):
            raise RuntimeError("the sequential gate asked for samples that no side lacks")


def _staged(
    seq: SequentialGate, baseline: Drawn, child: Drawn, need: dict[str, int], stage: int, settle: bool
) -> dict[str, int] | tuple[GateVerdict, dict[str, Any]]:
    """What a look of early rejection draws of the child next: nothing until S0 has the look's
    samples, then `stage` cases at a time in `look_order`; or, once the rejection is certain, the
    verdict and where it stopped (after the cases `to_settle` names are drawn, with `settle`)."""
    if _baseline_lacks(baseline, need, seq.decide(baseline, child).child_only):
        return {}  # S0's samples of the look first; the child's then come stage by stage
    early = certain_rejection(seq, baseline, child, need)
    if early is None:
        return {cid: need[cid] for cid in look_order(baseline, child, need, seq.gate.tolerance)[:stage]}
    extra = to_settle(seq, baseline, child, need) if settle else []
    if extra:
        return {cid: need[cid] for cid in extra}
    left = missing(child, need)
    return early, {"look": max(left.values()), "skipped": sorted(left), "reason": early.summary()}


def _draw_lacking(
    draw: Draw, decision: Decision, need: dict[str, int], baseline: Drawn, child: Drawn, drawn: dict[str, int]
) -> bool:
    """Draw what each side lacks (S0: what the look needs of both sides and of S0 alone; the child:
    `need`), counted in `drawn`; False when no side lacked any."""
    progressed = False
    for side, state in (("baseline", baseline), ("child", child)):
        starts: dict[tuple[int, int], list[str]] = {}
        both = {c: k for c, k in decision.need.items() if c not in decision.child_only}
        needs = (
            {**both, **{c: max(k, both.get(c, 0)) for c, k in decision.baseline_need.items()}}
            if side == "baseline"
            else need
        )
        for cid, k in needs.items():
            have = len(state.outcomes[cid].passes) if cid in state.outcomes else k
            if have < k:
                starts.setdefault((have, k), []).append(cid)
        for (start, k), ids in sorted(starts.items()):
            draw(side, ids, start, k - start)
            drawn[side] += len(ids) * (k - start)
            progressed = True
    return progressed


def certain_rejection(
    seq: SequentialGate, baseline: Drawn, child: Drawn, need: Mapping[str, int]
) -> GateVerdict | None:
    """The verdict when the look that asked for `need` (`SequentialGate.decide`'s) rejects the child whatever the
    samples it still lacks give; None otherwise (or while S0 lacks samples of that look).

    The verdict is the one on the child's best completion (every missing sample passing). Looks
    before this one read none of the missing samples, and the noise-aware rule is monotone in
    the child's passes, so the best completion rejecting at this look means every completion
    does: the decision is the full draw's. Its case lists name drawn samples' cases only.
    """
    if _baseline_lacks(baseline, need, seq.decide(baseline, child).child_only):
        return None
    verdict = seq.decide(baseline, completion(child, need, True)).verdict
    if verdict is None or verdict.passed:
        return None
    assumed = set(missing(child, need))
    checks = [
        dataclasses.replace(c, fail_to_pass=[cid for cid in c.fail_to_pass if cid not in assumed])
        for c in verdict.checks
    ]
    return dataclasses.replace(verdict, checks=checks)

def to_settle(seq: SequentialGate, baseline: Drawn, child: Drawn, need: Mapping[str, int]) -> list[str]:
    """Once `certain_rejection` holds: the cases of `missing(child, need)` whose samples the
    verdict's failing categories and broken must-pass cases still depend on (what attribution
    reads of a rejected child), sorted.

    A category failing in the best completion fails in the full draw, one passing in the worst
    completion passes (monotone, and a category's check reads its own cases only); so the
    cases needed are those of a category that fails only in the worst completion, and the
    must-pass cases broken only in the worst completion.
    """
    best = seq.decide(baseline, completion(child, need, True)).verdict
    worst = seq.decide(baseline, completion(child, need, False)).verdict
    if best is None or worst is None:
        return []
    open_categories = set(worst.failed_categories()) - set(best.failed_categories())
    open_cases = set(worst.must_pass_broken) - set(best.must_pass_broken)
    return sorted(
        cid for cid in missing(child, need) if cid in open_cases or child.outcomes[cid].category in open_categories
    )


def missing(child: Drawn, need: Mapping[str, int]) -> dict[str, int]:
    """Case id → samples per case the child lacks of what `need` (a look's) asks, for the cases it
    has results for (a case it has none for counts as failed and is not drawn)."""
    return {cid: k for cid, k in need.items() if cid in child.outcomes and len(child.outcomes[cid].passes) < k}


def completion(child: Drawn, need: Mapping[str, int], passed: bool) -> Drawn:
    """`child` with every sample `need` asks of it and it lacks filled in as passed (the best
    completion) or failed (the worst)."""
    filled = dict(child.outcomes)
    for cid, k in missing(child, need).items():
        o = filled[cid]
        filled[cid] = dataclasses.replace(o, passes=o.passes + (passed,) * (k - len(o.passes)))
    return Drawn(filled, dict(child.lost_at))


def look_order(baseline: Drawn, child: Drawn, need: Mapping[str, int], tolerance: float) -> list[str]:
    """The cases of `missing(child, need)` in the order that decides a look's rejection soonest.

    Category by category (a category's tests are decided once most of its cases are known), the
    one the child is predicted to clear its floor by the least first: its cases' rates so far
    carried to the look's k, against (1 − ε) times S0's passes there. Within a category, the cases
    the child trails S0 on the most first (those a one-case test may find broken). Ties by id.
    """
    lacking = missing(child, need)
    k = max(need.values(), default=0)
    slack: dict[str, float] = {child.outcomes[cid].category: 0.0 for cid in lacking}
    trail: dict[str, float] = {}
    for cid, base in baseline.outcomes.items():
        if base.category not in slack:
            continue
        own = child.outcomes[cid].passes[:k] if cid in child.outcomes else ()
        rate = sum(own) / len(own) if own else 0.0
        s0 = base.passes[:k]
        trail[cid] = rate - sum(s0) / max(1, len(s0))
        slack[base.category] += sum(own) + (k - len(own)) * rate - (1.0 - tolerance) * sum(s0)
    return sorted(
        lacking, key=lambda cid: (slack[child.outcomes[cid].category], child.outcomes[cid].category, trail[cid], cid)
    )


def _baseline_lacks(baseline: Drawn, need: Mapping[str, int], child_only: frozenset[str]) -> bool:
    """S0 lacks samples that `need` asks of both sides (the cases in `child_only` ask only the child's)."""
    return any(
        cid in baseline.outcomes and cid not in child_only and len(baseline.outcomes[cid].passes) < k
        for cid, k in need.items()
    )
