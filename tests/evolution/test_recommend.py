"""The recommended member: a gain over S0 must be significant (Bonferroni over the children evaluated)."""

from __future__ import annotations

import math

import pytest

from frames_cli.evolution.gate import CaseOutcome
from frames_cli.evolution.recommend import gain_p_value, recommendation_note
from frames_cli.evolution.records import Candidate, RunState
from frames_cli.evolution.run_ids import BASE_ID

RUN = "20261201-090000-aaaaaa"


def _outcomes(passes: list[tuple[bool, ...]]) -> dict[str, CaseOutcome]:
    return {f"c{i}": CaseOutcome("cat", p) for i, p in enumerate(passes)}


def test_gain_p_value_is_the_sign_test_on_discordant_cases():
    # 6 cases the child passes and S0 fails, 1 the other way, 3 alike: P(Bin(7, ½) ≥ 6) = 8/128.
    base = _outcomes([(False,)] * 6 + [(True,)] + [(True,)] * 3)
    child = _outcomes([(True,)] * 6 + [(False,)] + [(True,)] * 3)
    assert gain_p_value(base, child, 1) == pytest.approx(8 / 128)
    # The same outcomes with the sides swapped are a loss: no evidence of a gain at all.
    assert gain_p_value(child, base, 1) == pytest.approx(sum(math.comb(7, x) for x in range(1, 8)) / 128)


def test_gain_p_value_compares_only_cases_both_sides_scored_with_k_samples():
    base = _outcomes([(False, False), (False, False), (True, True)])
    child = _outcomes([(True, True), (True, True)])  # c2 lost on the child's side
    # Two cases at 0 of 2 against 2 of 2: each stratum's S0 share is hypergeometric, P = (1/6)².
    assert gain_p_value(base, child, 2) == pytest.approx(1 / 36)
    # Extra samples the sequential gate drew for a case are not counted: every case weighs k.
    longer = {cid: CaseOutcome("cat", o.passes + (False, False)) for cid, o in child.items()}
    assert gain_p_value(base, longer, 2) == pytest.approx(1 / 36)
    assert gain_p_value({}, child, 2) == 1.0


def _run(alpha: float, *children: tuple[str, float, float | None]) -> RunState:
    state = RunState(RUN, "a" * 40, config={"evolution": {"recommend_alpha": alpha}})
    state.candidates.append(Candidate(BASE_ID, "a" * 40, None, 0, 0.25, {}, 100.0))
    for i, (cid, rate, p) in enumerate(children):
        state.candidates.append(Candidate(cid, f"{i + 1:x}" * 40, BASE_ID, 1, rate, {}, 100.0 - i, gate_passed=True, gain_p=p))
    state.front = [c.id for c in state.candidates]
    return state


def test_a_gain_that_is_not_significant_leaves_s0_the_best_member():
    state = _run(0.05, ("r1c1", 0.45, 0.11), ("r2c1", 0.40, 0.30))
    assert state.best().id == BASE_ID
    note = recommendation_note(state)
    assert "p ≤ 0.05 / 2 = 0.025" in note and "smallest: r1c1, p = 0.11" in note and "S0 stays" in note


def test_the_bar_is_alpha_over_every_child_evaluated():
    # p = 0.02 clears 0.05 / 2 but not 0.05 / 3: a third child evaluated (even one off the front) raises the bar.
    state = _run(0.05, ("r1c1", 0.45, 0.02), ("r2c1", 0.30, 0.60))
    assert state.best().id == "r1c1"
    assert "r1c1 has p = 0.02" in recommendation_note(state)
    state.candidates.append(Candidate("r3c1", "f" * 40, BASE_ID, 3, 0.10, {}, 90.0, gate_passed=False))
    assert state.recommendation_bar() == pytest.approx(0.05 / 3)
    assert state.best().id == BASE_ID


def test_the_highest_rate_among_significant_members_wins():
    state = _run(0.05, ("r1c1", 0.45, 0.001), ("r2c1", 0.60, 0.004), ("r3c1", 0.70, 0.2))
    assert state.best().id == "r2c1"


def test_alpha_one_is_the_papers_rule_and_older_runs_keep_it():
    state = _run(1.0, ("r1c1", 0.45, 0.9))
    assert state.best().id == "r1c1"
    assert recommendation_note(state) is None
    older = _run(0.05, ("r1c1", 0.45, None))
    older.config = {}
    assert older.recommend_alpha == 1.0 and older.best().id == "r1c1"


def test_s0_off_the_front_is_still_the_recommendation_when_no_gain_is_significant():
    state = _run(0.05, ("r1c1", 0.25, 1.0))
    state.front = ["r1c1"]  # same pass rate, fewer tokens: S0 is dominated
    assert state.best().id == BASE_ID
    early = _run(0.05, ("r1c1", 0.45, None))  # rejected early: no p-value, never recommended
    assert early.best().id == BASE_ID


def test_the_note_names_the_cases_no_diagnoser_saw_and_says_when_there_are_none():
    from frames_cli.evolution.recommend import blind_cases, declined

    state = _run(0.05, ("r1c1", 0.45, 0.25))
    state.checkpoint = {"split": {"diagnosis": ["a", "b", "c"], "selection": ["b", "c", "d", "e"]}}
    assert blind_cases(state) == 2 and declined(state)
    assert "on the 2 selection cases no diagnoser saw" in recommendation_note(state)
    state.checkpoint = {"split": {"diagnosis": ["a", "b"], "selection": ["a", "b"]}}  # the paper's single set E
    assert blind_cases(state) == 0 and "no gain can be tested" in recommendation_note(state)
    assert not declined(_run(1.0, ("r1c1", 0.45, 0.25)))


def test_a_members_review_line_says_whether_it_is_recommended():
    from frames_cli.evolution.recommend import member_line

    state = _run(0.05, ("r1c1", 0.45, 0.01), ("r2c1", 0.50, 0.2))
    assert member_line(state, state.candidate("r1c1")).endswith("recommended: it is the run's best member")
    assert "p = 0.2 on the selection set, against a bar of 0.05 / 2 = 0.025: not recommended (the run's best member is r1c1)" \
        == member_line(state, state.candidate("r2c1"))
    assert member_line(state, state.base_candidate()) is None
    assert member_line(_run(1.0, ("r1c1", 0.45, 0.01)), _run(1.0, ("r1c1", 0.45, 0.01)).candidate("r1c1")) is None
