"""The run's recommendation in words, for the menu, the reports, `frames runs`, `review` and `promote`.

The rule itself is evolution/compare/evidence.py (decided at the run's end by evolution/decide/confirm.py and, for
a pending branch, later by evolution/decide/prospective.py); this module only says what it decided and
how strong the evidence is, so that no surface hides a gain the run's own table shows or calls
noise a gain. A child's p on the selection cases no diagnoser saw (the menu's "p, unseen cases"
row) is evidence.gain_p_value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frames_cli.formatting import pct, sample_size

if TYPE_CHECKING:
    from frames_cli.evolution.state.records import Candidate, RunState


def blind_cases(state: RunState) -> int | None:
    """How many selection cases no diagnoser saw; None when the run recorded no split."""
    split = state.checkpoint.get("split") or {}
    if "selection" not in split:
        return None
    return len(set(split["selection"]) - set(split.get("diagnosis", [])))


def top_member(state: RunState) -> Candidate | None:
    """The front member with the highest selection pass rate above S0's (fewer tokens, then older,
    on a tie); None when no child on the front beats S0's rate. What the menu's table shows as the gain."""
    base = state.base_candidate()
    if base is None or base.pass_rate is None:
        return None
    children = [
        c for c in state.front_candidates() if c.parent_id is not None and (c.pass_rate or 0.0) > base.pass_rate
    ]
    return max(children, key=lambda c: (c.pass_rate, -(c.mean_tokens or 0.0), -state.candidates.index(c)), default=None)


def declined(state: RunState) -> bool:
    """True when the run finished with S0 as its recommendation although a front member's pass rate
    is higher (a gain the table shows that the evidence does not carry)."""
    best, rec = state.best(), state.recommended()
    return (state.status == "finished" and state.recommend_alpha < 1 and best is not None and best.parent_id is None
            and top_member(state) is not None and not (rec is not None and rec.budget_spent))


def headline(state: RunState) -> str:
    """One line: S0's rate, the highest front member's, and what the evidence says, e.g.
    "S0 40.0% → r3c1 90.0% (+50.0 pt on the selection set): 5 of 5 changed unseen cases fixed (p = 0.031);
    significant; review branch frames/<run> (final)"; "S0 40.0% → r3c1 90.0% (…): not distinguishable
    from noise (…); no review branch". Never names only S0 when a member's rate is higher."""
    base, best, top = state.base_candidate(), state.best(), top_member(state)
    if base is None or base.pass_rate is None:
        return "S0 not evaluated yet"
    branch = best if best is not None and best.parent_id is not None else None
    # The gain the table shows: the highest member; the member with the branch is named after it when it differs.
    shown = (
        top if top is not None and (branch is None or (top.pass_rate or 0.0) > (branch.pass_rate or 0.0)) else branch
    )
    if shown is None:
        return f"S0 {pct(base.pass_rate)}; no child beat it"
    split = state.checkpoint.get("split") or {}
    where = "the selection set" if split and not split.get("paper") else "E"
    size = sample_size(base.n_cases, base.samples)
    gain = (f"S0 {pct(base.pass_rate)} → {shown.id} {pct(shown.pass_rate)} "
            f"({100 * ((shown.pass_rate or 0.0) - base.pass_rate):+.1f} pt on {where}{', ' + size if size else ''})")
    rec = state.recommended()
    if rec is None:
        return f"{gain}; the run's end has not decided the recommendation yet"
    if branch is not None:
        where = f"review branch {state.branch}" if state.branch else "review branch not made yet"
        if branch is not shown:
            gain += f"; the review branch is {branch.id}'s ({pct(branch.pass_rate)})"
        return f"{gain}: {rec.words()}; {where} ({rec.status})"
    return f"{gain}: {rec.words()}; no review branch"


def recommendation_note(state: RunState) -> str | None:
    """The line under the deploy menu: how the member with the branch was chosen and what the
    evidence says; None before the run's end decided it."""
    rec = state.recommended()
    if rec is None:
        return None
    if rec.rule == "paper":
        return (
            "★ is the front member of the highest pass rate (the paper's rule, `evolution.recommend_alpha: 1`): no "
            "test against noise."
        )
    if rec.rule == "legacy":
        return f"★: {rec.words()}."
    blind = blind_cases(state)
    cases = (
        "fresh samples of the diagnosed cases (no selection case is unseen: every category kept whole, or the single "
        "set E)"
        if not blind
        else f"the {blind} selection cases no diagnoser saw and fresh samples of the diagnosed ones"
    )
    how = (
        f"★ needs a gain over S0 significant at α = {rec.alpha:g} (exact one-sided paired test) on {cases}; children "
        "are tested in order of their diagnosis-set pass rate until one is not significant; a gain on unseen cases is "
        "final, one on diagnosed cases alone is pending until cases added later confirm it"
    )
    best = state.best()
    if best is not None and best.parent_id is not None:
        return f"{how}. {best.id} ({rec.status}): {rec.words()}."
    return f"{how}. S0 stays the recommendation: {rec.words()}."


def member_line(state: RunState, cand: Candidate) -> str | None:
    """One line for `frames review`: this member's evidence and whether it is the run's recommendation;
    None for S0 or before the run's end decided it."""
    rec = state.recommended()
    if cand.parent_id is None or rec is None:
        return None
    best = state.best()
    step = next((s for s in rec.steps if s.member == cand.id), None)
    own = (
        f"{step.evidence()}; {'significant' if step.significant else 'not significant'} at α = {rec.alpha:g}"
        if step
        else "not tested"
    )
    if best is not None and best.id == cand.id:
        return f"recommended ({rec.status}): {rec.words()}"
    if rec.member == cand.id and rec.status == "withdrawn":
        return f"not recommended any more: {rec.words()}"
    other = "S0" if best is None or best.parent_id is None else best.id
    return f"not recommended (the run recommends {other}); this member: {own}"


def against(state: RunState, cand: Candidate) -> str | None:
    """What `frames promote` says before it promotes `cand`, a child that passed the gate: None when
    `cand` is the run's recommendation and its evidence is final; otherwise why promoting it goes
    against the run (a child that failed the gate has the gate override's own warning)."""
    if not cand.gate_passed:
        return None
    best = state.best()
    other = "S0" if best is None or best.parent_id is None else best.id
    if state.recommend_alpha >= 1:
        return (
            None if best is not None and best.id == cand.id
            else (
                f"this goes against the run's recommendation ({other}, the highest pass rate on the front: the paper's "
                "rule)"
            )
        )
    rec = state.recommended()
    if rec is None:
        return f"the run has not decided its recommendation (status {state.status}); {cand.id}'s gain is untested"
    if best is not None and best.id == cand.id:
        return None if rec.status == "final" or rec.rule == "legacy" else f"{cand.id} is recommended, but {rec.words()}"
    line = member_line(state, cand) or ""
    return (
        f"this goes against the run's recommendation ({other}); {cand.id}'s evidence: "
        f"{line.split('; this member: ')[-1]}"
    )
