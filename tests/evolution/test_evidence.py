"""The recommendation rule (evolution/compare/evidence.py): tallies, the fixed-sequence walk, final vs pending."""

from __future__ import annotations

import itertools
import math

import pytest

from frames_cli.evolution.compare.evidence import (
    Confirmation,
    Ranked,
    Recommendation,
    Tally,
    decide,
    gain_p_value,
    order,
)
from frames_cli.evolution.compare.verdict import CaseOutcome
from frames_cli.evolution.compare.paired_test import upper_p_value


def outcomes(*passes: tuple[bool, ...], prefix: str = "c") -> dict[str, CaseOutcome]:
    return {f"{prefix}{i}": CaseOutcome("cat", p) for i, p in enumerate(passes)}


def test_gain_p_value_is_the_tally_p():
    assert gain_p_value(outcomes(*[(False,)] * 5), outcomes(*[(True,)] * 5), 1) == pytest.approx(1 / 32)


def test_a_tally_counts_fixed_and_broken_cases_and_tests_the_gain():
    base = outcomes(*[(False,)] * 6, (True,), (True,), (True,), (False,))
    member = outcomes(*[(True,)] * 6, (False,), (True,), (True,), (False,))
    tally = Tally.of(base, member, 1)
    # 6 fixed, 1 broken: McNemar's exact one-sided p, P(Bin(7, ½) ≥ 6) = 8/128.
    assert (tally.cases, tally.fixed, tally.broken) == (10, 6, 1)
    assert tally.p == pytest.approx(8 / 128)
    assert tally.words("unseen") == "6 fixed, 1 broken of 10 unseen cases"
    assert Tally.of(member, base, 1).p == pytest.approx(sum(math.comb(7, x) for x in range(1, 8)) / 128)
    assert Tally.of(base, base, 1).words() == "none of 10 cases changed"
    assert Tally.of(outcomes((False,)), outcomes((True,)), 1).words("unseen") == "1 of 1 changed unseen case fixed"


def test_a_tally_compares_the_first_k_samples_of_cases_both_sides_hold():
    base = outcomes((False, False), (False, False), (True, True))
    member = outcomes((True, True, False), (True, True))  # c2 lost on the member's side
    tally = Tally.of(base, member, 2)
    assert (tally.cases, tally.fixed) == (2, 2)
    assert tally.p == pytest.approx(1 / 36)  # two strata at 0 of 2 against 2 of 2: (1/6)²
    with pytest.raises(ValueError):
        Tally.of(base, member, 0)


@pytest.mark.parametrize("probs", [(0.5,) * 8, (0.1, 0.3, 0.5, 0.5, 0.7, 0.9, 0.95, 0.2)])
def test_the_test_rejects_at_most_alpha_when_the_member_is_s0_again(probs):
    # Exact: every outcome of S0 and an identical member on 8 cases (k = 1), weighted by its chance.
    alpha, size = 0.05, 0.0
    for draws in itertools.product((0, 1), repeat=16):
        weight = math.prod(p if d else 1 - p for p, d in zip(probs * 2, draws))
        strata = [(draws[8 + i], draws[i]) for i in range(8)]
        if upper_p_value(strata, 1) <= alpha:
            size += weight
    assert size <= alpha


def step(member: str, p: float, gate: bool = True, unseen_p: float | None = None) -> Confirmation:
    unseen = Tally(6, 5, 0, p if unseen_p is None else unseen_p)
    return Confirmation(member, 0.9, gate, unseen, Tally(14, 7, 0, p), p, p <= 0.05)


def walk(children: list[Ranked], results: dict[str, Confirmation], limit: int = 3) -> tuple[Recommendation, list[str]]:
    asked: list[str] = []

    def confirm(child: Ranked) -> Confirmation:
        asked.append(child.member)
        return results[child.member]

    return decide(children, confirm, 0.05, limit), asked


def test_children_are_tested_best_diagnosis_rate_first_and_older_first_on_a_tie():
    kids = [Ranked("r1c1", 0.7, True), Ranked("r2c1", 0.9, True), Ranked("r3c1", 0.9, True)]
    assert [c.member for c in order(kids)] == ["r2c1", "r3c1", "r1c1"]


def test_the_first_significant_child_that_passed_the_gate_gets_the_branch():
    kids = [Ranked("r1c1", 0.7, True), Ranked("r2c1", 0.9, True)]
    rec, asked = walk(kids, {"r2c1": step("r2c1", 0.01, unseen_p=0.03), "r1c1": step("r1c1", 0.001)})
    assert (rec.member, rec.status, asked) == ("r2c1", "final", ["r2c1"])  # r1c1 never drawn for


def test_a_gain_significant_only_with_the_diagnosed_cases_is_pending():
    rec, _ = walk([Ranked("r1c1", 0.9, True)], {"r1c1": step("r1c1", 0.001, unseen_p=0.5)})
    assert (rec.member, rec.status) == ("r1c1", "pending")
    assert rec.words().startswith("in-sample only: review with care")


def test_a_significant_child_that_failed_the_gate_hands_the_turn_on_and_noise_ends_the_walk():
    kids = [Ranked("r1c1", 0.95, False), Ranked("r2c1", 0.9, True), Ranked("r3c1", 0.8, True)]
    rec, asked = walk(kids,
                      {"r1c1": step("r1c1", 0.01, gate=False), "r2c1": step("r2c1", 0.01), "r3c1": step("r3c1", 0.0)})
    assert (rec.member, asked) == ("r2c1", ["r1c1", "r2c1"])
    rec, asked = walk(kids, {"r1c1": step("r1c1", 0.2), "r2c1": step("r2c1", 0.0), "r3c1": step("r3c1", 0.0)})
    assert (rec.member, rec.status, asked) == (None, "none", ["r1c1"])
    assert rec.words().startswith("not distinguishable from noise (r1c1:")
    rec, asked = walk(kids, {c.member: step(c.member, 0.01, gate=False) for c in kids}, limit=2)
    assert (rec.member, asked) == (None, ["r1c1", "r2c1"])


def test_a_recommendation_survives_its_json():
    rec, _ = walk([Ranked("r1c1", 0.9, True)], {"r1c1": step("r1c1", 0.001, unseen_p=0.5)})
    assert Recommendation.from_json(rec.to_json()) == rec
    with pytest.raises(ValueError):
        Recommendation.from_json({**rec.to_json(), "status": "maybe"})
    with pytest.raises(ValueError):
        decide([], lambda c: step(c.member, 0.0), 1.0, 3)
