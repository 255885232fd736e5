"""Sequential sampling for the noise-aware gate (evolution/compare/sequential.py).

Invariants:
1. Looks are k, 2k, 4k, … up to the maximum; the α spent over them sums to α, most at the last.
2. A category is accepted at an interim look only when its samples rule out, at β_s, a third of
   its cases broken (S0 passing each at least half the time, the child never; S0's side read on
   its first K_s samples, a step of 8, 16, 32, … drawn for S0 alone, only for the cases the child
   has not passed and only when S0's passes so far could reach β_s). Otherwise, without a
   significant drop, a category below its floor asks for more samples of all its cases, on both
   sides, up to the next look; one at or above it only for the cases the child has not passed
   yet that the broken-third test reads, of the child; a drop the data show at a later look
   rejects; the last look tests every open category in full and accepts what noise still explains.
3. Under the null (S0 against fresh samples of S0), the share of rejected children stays ≤ α; a
   category with a third of its cases broken is accepted early at most Σ_s β_s = β of the time.
4. Samples beyond a look are not read at it; a case lost at a sample is left out from the look
   that needs it on; `sequential_verdict` draws only what a side lacks, from its current count on.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from frames_cli.evolution.compare.gate import PerCategoryGate
from frames_cli.evolution.compare.verdict import CaseOutcome
from frames_cli.evolution.compare.sequential import (
    Drawn,
    SequentialGate,
    drawn_outcomes,
    look_schedule,
    spending,
)
from frames_cli.evolution.compare.sequential_draw import sequential_verdict


def _o(category: str, passes: str, must: bool = False) -> CaseOutcome:
    return CaseOutcome(category, tuple(c == "1" for c in passes), must)


def _gate(max_samples: int = 20, k: int = 5, alpha: float = 0.05) -> SequentialGate:
    seq = SequentialGate.plan(PerCategoryGate(0.05, "noise-aware", alpha), k, max_samples)
    assert seq is not None
    return seq


def test_looks_double_up_to_the_maximum_and_alpha_is_spent_mostly_at_the_end():
    assert look_schedule(5, 20) == (5, 10, 20)
    assert look_schedule(1, 20) == (1, 2, 4, 8, 16, 20)
    assert look_schedule(5, 5) == (5,) and look_schedule(5, 3) == (5,)
    spent = spending((5, 10, 20), 0.05)
    assert sum(spent) == pytest.approx(0.05)
    assert spent == pytest.approx((0.05 / 16, 0.05 * 3 / 16, 0.05 * 12 / 16))
    assert spending((5,), 0.05) == pytest.approx((0.05,))
    assert SequentialGate.plan(PerCategoryGate(0.05, "paper"), 5, 20) is None
    assert SequentialGate.plan(PerCategoryGate(0.05, "noise-aware"), 5, 5) is None
    assert _gate().first_look().alpha == pytest.approx(0.05 / 16)


def _world(n_other: int = 2) -> tuple[dict[str, CaseOutcome], dict[str, CaseOutcome]]:
    """S0 passes three `drop` cases 3 times in 5 (20 samples given), the child never passes d0 and
    is S0 on the others; `other` categories are equal on both sides."""
    base = {f"d{i}": _o("drop", "11010" * 4) for i in range(3)}
    child = {"d0": _o("drop", "0" * 20), "d1": _o("drop", "11010" * 4), "d2": _o("drop", "11010" * 4)}
    for c in range(n_other):
        for i in range(3):
            base[f"o{c}{i}"] = child[f"o{c}{i}"] = _o(f"other{c}", "10101" * 4)
    return base, child


def _cut(outcomes: dict[str, CaseOutcome], k: int, only: str | None = None) -> dict[str, CaseOutcome]:
    return {cid: CaseOutcome(o.category, o.passes[:k] if only in (None, o.category) else o.passes[:5], o.must_pass)
            for cid, o in outcomes.items()}


def test_a_category_below_its_floor_without_a_significant_drop_asks_for_more_samples_then_rejects():
    base, child = _world()
    seq = _gate()
    fixed = seq.first_look().check(_cut(base, 5), _cut(child, 5))
    drop = next(c for c in fixed.checks if c.category == "drop")
    assert fixed.passed and drop.below_floor  # at k = 5 noise explains it
    first = seq.decide(Drawn(_cut(base, 5)), Drawn(_cut(child, 5)))
    assert first.verdict is None and first.need == {"d0": 10, "d1": 10, "d2": 10}  # only the undecided category
    second = seq.decide(Drawn(_cut(base, 10, "drop")), Drawn(_cut(child, 10, "drop")))
    assert second.verdict is None and set(second.need) == {"d0", "d1", "d2"} and set(second.need.values()) == {20}
    verdict = seq.decide(Drawn(_cut(base, 20, "drop")), Drawn(_cut(child, 20, "drop"))).verdict
    assert verdict is not None and not verdict.passed and verdict.failed_categories() == ["drop"]
    story = verdict.sequential["categories"]
    assert story["drop"]["samples"] == 20 and "k = 5, 10" in story["drop"]["why"]
    assert story["other0"]["samples"] == 5 and story["other0"]["why"].startswith("decided at k = 5")
    assert verdict.sequential["looks"] == [5, 10, 20] and verdict.alpha == 0.05
    assert verdict.sequential["acceptance"] == {"baseline_samples": [8, 16, 20], "betas": pytest.approx([0.05 / 3] * 3)}
    assert next(c for c in verdict.checks if c.category == "drop").samples == 20


def test_the_last_look_accepts_a_dip_noise_still_explains():
    base = {f"d{i}": _o("drop", "10" * 10) for i in range(3)}
    # The child fails d2 in its first 10 samples (a broken case is not ruled out before the last look), then passes it.
    child = {"d0": _o("drop", "10" * 10), "d1": _o("drop", "10" * 10), "d2": _o("drop", "0" * 10 + "10" * 5)}
    verdict = _gate().decide(Drawn(base), Drawn(child)).verdict
    assert verdict is not None and verdict.passed
    assert verdict.sequential["categories"]["drop"]["samples"] == 20  # it was undecided until the end


def test_a_category_at_its_floor_that_may_hide_a_broken_case_is_not_accepted_at_the_first_look():
    # S0 passes d0 3 times in 5, the child never; a gain on d1 lifts the category to S0's rate at k = 5.
    base = {"d0": _o("drop", "10110" * 8), "d1": _o("drop", "00000" + "01000" * 7), "d2": _o("drop", "10000" * 8)}
    child = {"d0": _o("drop", "0" * 40), "d1": _o("drop", "11100" + "01000" * 7), "d2": _o("drop", "10000" * 8)}
    seq = _gate(40)
    first = seq.first_look().check(_cut(base, 5), _cut(child, 5))
    assert first.passed and not first.checks[0].below_floor  # the rule before: accepted here
    # S0 passed d0 3 times in 5: more samples of S0 would not rule a broken d0 out, so none are
    # drawn; the category is open on d0 alone, and only the child's samples of d0 are asked for.
    decision = seq.decide(Drawn(_cut(base, 5)), Drawn(_cut(child, 5)))
    assert decision.verdict is None and decision.need == {"d0": 10} and not decision.baseline_need
    # With all 40 of S0's samples there (drawn for another child), d0 (24 in 40) is still not ruled out.
    decision = seq.decide(Drawn(base), Drawn(_cut(child, 5)))
    assert decision.verdict is None and decision.need == {"d0": 10}
    verdict = seq.decide(Drawn(base), Drawn(child)).verdict
    assert not verdict.passed and verdict.failed_categories() == ["drop"]
    assert (
        verdict.checks[0].samples > 5
        and "a broken third of its cases not ruled out at k = 5" in verdict.sequential["categories"]["drop"]["why"]
    )


def test_a_category_at_its_floor_and_clear_of_broken_cases_is_accepted_at_the_first_look():
    seq = _gate(40)
    # The child passes every case at least once: none can be one it fails every time.
    base = {f"d{i}": _o("drop", "11110") for i in range(3)}
    child = {"d0": _o("drop", "11110"), "d1": _o("drop", "11101"), "d2": _o("drop", "10111")}
    verdict = seq.decide(Drawn(base), Drawn(child)).verdict
    assert verdict.passed and verdict.checks[0].samples == 5
    assert "no broken third of its cases (p = 0 ≤ β" in verdict.sequential["categories"]["drop"]["why"]
    # Below its floor, with no drop the data show and no case it never passed, it is accepted too
    # (decision 0094: the floor alone no longer holds a category open).
    below = {f"d{i}": _o("drop", "10010") for i in range(3)}
    verdict = seq.decide(Drawn(base), Drawn(below)).verdict
    assert verdict.passed and verdict.checks[0].below_floor and verdict.checks[0].samples == 5
    # A case the child never passed is cleared by S0's samples when S0 rarely passes it: 1 in 16
    # (p = 17/65536 at the step of 16 samples, β_s = 0.05 / 4).
    base = {"d0": _o("drop", "00001" + "0" * 35), "d1": _o("drop", "11110" * 8), "d2": _o("drop", "11110" * 8)}
    child = {"d0": _o("drop", "00000"), "d1": _o("drop", "11111"), "d2": _o("drop", "11110")}
    verdict = seq.decide(Drawn(base), Drawn(child)).verdict
    assert verdict.passed and verdict.checks[0].samples == 5
    assert "on 16 samples of S0" in verdict.sequential["categories"]["drop"]["why"]


def test_a_category_with_a_third_of_its_cases_broken_is_accepted_early_at_most_the_beta_spent(monkeypatch):
    import frames_cli.evolution.compare.sequential as sequential

    monkeypatch.setattr(sequential, "REGRESSION_BETA", 0.3)  # a bound a few hundred trials can check
    rng = random.Random(7)
    seq = _gate(40)
    interim = sum(seq.betas[:-1])
    early = trials = 0
    for _ in range(400):
        n = rng.randint(2, 7)
        base, child = {}, {}
        for i in range(n):
            p = rng.choice([0.1, 0.3, 0.5])
            base[f"x{i}"] = CaseOutcome("c", tuple(rng.random() < p for _ in range(40)))
            child[f"x{i}"] = CaseOutcome("c", tuple(rng.random() < p for _ in range(40)))
        for i in range(math.ceil(n / 3)):  # broken: S0 passes it half the time (the hardest case), the child never
            base[f"x{i}"] = CaseOutcome("c", tuple(rng.random() < 0.5 for _ in range(40)))
            child[f"x{i}"] = CaseOutcome("c", (False,) * 40)
        verdict = seq.decide(Drawn(base), Drawn(child)).verdict
        trials += 1
        early += verdict.passed and verdict.checks[0].samples < 40
    assert early / trials <= interim + 0.05  # Σ β_j over the interim looks, with room for 400 trials


def test_a_rejection_at_the_first_look_ends_the_gate_and_a_broken_must_pass_case_rejects():
    base = {"m": _o("a", "11111", must=True), "x": _o("b", "11111")}
    child = {"m": _o("a", "11110", must=True), "x": _o("b", "11111")}
    verdict = _gate().decide(Drawn(base), Drawn(child)).verdict
    assert verdict is not None and not verdict.passed and verdict.must_pass_broken == ["m"]


def test_samples_beyond_a_look_are_not_read_there():
    base, child = _world()
    seq = _gate()
    # S0 has 20 samples of every case (drawn for an earlier child); the child has 5: look 1 reads 5 of each.
    decision = seq.decide(Drawn(base), Drawn(_cut(child, 5)))
    assert decision.verdict is None and set(decision.need) == {"d0", "d1", "d2"}


def test_a_case_lost_at_a_sample_is_left_out_from_the_look_that_needs_it():
    results = [{"case_id": "a", "category": "c", "sample": s, "passed": True, "lost": s == 7} for s in range(10)]
    results += [{"case_id": "b", "category": "c", "sample": s, "passed": s % 2 == 0} for s in range(5)]
    drawn = drawn_outcomes(results, ["b"])
    assert drawn.outcomes["a"].passes == (True,) * 7 and drawn.lost_at == {"a": 7}
    assert drawn.outcomes["b"].passes == (True, False, True, False, True) and drawn.outcomes["b"].must_pass
    base, child = _world()
    # Lost at sample 7: d0 counts at look 1 (the drop is undecided) and is not drawn for look 2 (left out there).
    decision = _gate().decide(Drawn(_cut(base, 5)), Drawn(_cut(child, 5), {"d0": 7}))
    assert decision.need == {"d1": 10, "d2": 10}
    # Lost at sample 3: left out from look 1 on, so the category is at its floor and decided there.
    verdict = _gate().decide(Drawn(_cut(base, 5), {"d0": 3}), Drawn(_cut(child, 5))).verdict
    assert verdict is not None and verdict.passed and verdict.sequential["categories"]["drop"]["samples"] == 5


def test_sequential_verdict_draws_only_what_a_side_lacks_from_its_count_on():
    base, child = _world()
    have = {"baseline": _cut(base, 10, "drop"), "child": _cut(child, 5)}
    full = {"baseline": base, "child": child}
    calls = []

    def draw(side, ids, first, count):
        calls.append((side, sorted(ids), first, count))
        for cid in ids:
            assert len(have[side][cid].passes) == first  # distinct samples: from the current count on
            have[side][cid] = CaseOutcome(full[side][cid].category, full[side][cid].passes[: first + count])

    verdict = sequential_verdict(_gate(), lambda: (Drawn(dict(have["baseline"])), Drawn(dict(have["child"]))), draw)
    assert not verdict.passed
    assert calls == [("child", ["d0", "d1", "d2"], 5, 5), ("baseline", ["d0", "d1", "d2"], 10, 10),
                     ("child", ["d0", "d1", "d2"], 10, 10)]
    assert verdict.sequential["drawn"] == {"baseline": 30, "child": 45}


def test_a_draw_that_adds_nothing_is_an_error():
    base, child = _world()
    with pytest.raises(RuntimeError, match="none of the samples"):
        sequential_verdict(_gate(), lambda: (Drawn(_cut(base, 5)), Drawn(_cut(child, 5))), lambda *_a: None)


def test_children_as_good_as_s0_are_rejected_at_most_alpha_of_the_time():
    rng = random.Random(12)
    seq = SequentialGate.plan(
        PerCategoryGate(0.05, "noise-aware", 0.2), 5, 20
    )  # α = 0.2: a bound a few hundred trials can check
    rejected = undecided = 0
    trials = 300
    for _ in range(trials):
        base, child = {}, {}
        for c in range(3):
            for i in range(rng.randint(2, 6)):
                p = rng.choice([0.1, 0.3, 0.5, 0.7, 0.9])
                base[f"{c}-{i}"] = CaseOutcome(f"c{c}", tuple(rng.random() < p for _ in range(20)))
                child[f"{c}-{i}"] = CaseOutcome(f"c{c}", tuple(rng.random() < p for _ in range(20)))
        verdict = seq.decide(Drawn(base), Drawn(child)).verdict
        rejected += not verdict.passed
        undecided += any(s["samples"] > 5 for s in verdict.sequential["categories"].values())
    assert rejected / trials <= 0.2
    assert undecided > trials / 20  # the looks beyond the first were exercised


def test_the_verdict_says_what_was_sampled_further_in_its_summary_and_detail():
    from frames_cli.evolution.compare.verdict import gate_detail

    base, child = _world()
    verdict = _gate().decide(Drawn(base), Drawn(child)).verdict
    assert "sampled further: drop to k = 20" in verdict.summary()
    record = verdict.to_json()
    assert record["sequential"]["categories"]["drop"]["looks"] == 3
    assert "sampled further: drop (to k = 20)" in gate_detail(record)
    alike = _gate().decide(Drawn(base), Drawn(dict(base))).verdict
    assert (
        alike.passed
        and "sampled further" not in alike.summary()
        and "sampled further" not in gate_detail(alike.to_json())
    )


def test_a_category_too_small_at_k_but_judged_at_a_later_look_gets_no_warning():
    from frames_cli.evolution.compare.gate import small_categories_warning, too_small_categories

    seq = _gate(20, 1)
    looks = list(zip(seq.looks, seq.alphas))
    counts = {"one": 1, "two": 2, "big": 12}
    assert [s.category for s in too_small_categories(counts, 1, 0.05)] == ["one", "two"]  # k = 1 alone
    assert too_small_categories(counts, 1, 0.05, looks) == []  # by k = 16 or 20 one case can show a drop
    tiny = too_small_categories(counts, 1, 0.05, list(zip(_gate(2, 1).looks, _gate(2, 1).alphas)))
    text = small_categories_warning(tiny, 2, "noise-aware", sequential=True)
    assert (
        "even at up to k = 2 samples" in text and "evolution.gate_max_samples" in text and "one (1 case, needs" in text
    )


def test_the_broken_cases_p_value_holds_its_level_at_every_pass_probability_of_the_alternative():
    from frames_cli.evolution.compare.paired_test import broken_cases_p_value

    k = 4
    assert broken_cases_p_value([(3, 1), (4, 2)], k, 1) == 0.0  # the child passed both: neither can be broken
    assert broken_cases_p_value([(3, 0), (4, 2)], k, 1) == pytest.approx(15 / 16)  # P(Binomial(4, ½) ≤ 3)
    assert broken_cases_p_value([(1, 0), (0, 0), (2, 0)], k, 2) == pytest.approx(
        93 / 256
    )  # the two S0 passed most: P(Binomial(8, ½) ≤ 3)
    assert broken_cases_p_value([(1, 0)], k, 0) == 1.0
    with pytest.raises(ValueError):
        broken_cases_p_value([(5, 0)], k, 1)
    # Exactly, by enumeration: two broken cases (S0 passes each with probability p ≥ ½, the child
    # never) beside one free case; the test at level β rejects at most β of the time.
    for p, q_free, beta in itertools.product((0.5, 0.7, 1.0), (0.0, 0.5), (0.05, 0.2)):
        law = [math.comb(k, x) * p**x * (1 - p) ** (k - x) for x in range(k + 1)]
        free = [math.comb(k, x) * 0.5**k for x in range(k + 1)]
        child_free = [math.comb(k, x) * q_free**x * (1 - q_free) ** (k - x) for x in range(k + 1)]
        reject = sum(law[a1] * law[a2] * free[a3] * child_free[b3]
                     for a1, a2, a3, b3 in itertools.product(range(k + 1), repeat=4)
                     if broken_cases_p_value([(a1, 0), (a2, 0), (a3, b3)], k, 2) <= beta)
        assert reject <= beta + 1e-12
    # More child passes never raise it (so early acceptance only gets easier for a better child).
    rng = random.Random(3)
    for _ in range(200):
        strata = [(rng.randint(0, k), rng.randint(0, k)) for _ in range(rng.randint(1, 6))]
        better = [(a, min(k, b + rng.randint(0, 1))) for a, b in strata]
        r = rng.randint(1, 3)
        assert broken_cases_p_value(better, k, r) <= broken_cases_p_value(strata, k, r)


def test_sequential_verdict_draws_the_samples_of_s0_that_early_acceptance_reads_for_s0_alone():
    # d0: S0 and the child fail it in their first 5 samples; S0 rarely passes it at all.
    base = {"d0": _o("drop", "0" * 12 + "1" + "0" * 27), "d1": _o("drop", "11110" * 8), "d2": _o("drop", "11110" * 8)}
    child = {"d0": _o("drop", "0" * 40), "d1": _o("drop", "11111" * 8), "d2": _o("drop", "11110" * 8)}
    have = {"baseline": _cut(base, 5), "child": _cut(child, 5)}
    full = {"baseline": base, "child": child}
    calls = []

    def draw(side, ids, first, count):
        calls.append((side, sorted(ids), first, count))
        for cid in ids:
            have[side][cid] = CaseOutcome(full[side][cid].category, full[side][cid].passes[: first + count])

    verdict = sequential_verdict(_gate(40), lambda: (Drawn(dict(have["baseline"])), Drawn(dict(have["child"]))), draw)
    # S0 only, the case the child never passed, to the first step (8 samples): 0 in 8 rules a broken d0 out.
    assert calls == [("baseline", ["d0"], 5, 3)] and verdict.passed
    assert "p = 0.0039 ≤ β = 0.013 on 8 samples of S0" in verdict.sequential["categories"]["drop"]["why"]


def test_a_category_open_on_the_broken_third_alone_draws_only_the_cases_the_child_has_not_passed():
    # d0: S0 passes it 3 times in 5, the child failed its first 5 and passes it from then on; the
    # category is at its floor thanks to d1. Only d0 of the child is drawn at k = 10, and passing
    # it there clears the category without a test of the others at k = 10.
    base = {"d0": _o("drop", "10110" * 8), "d1": _o("drop", "00000" * 8), "d2": _o("drop", "10000" * 8)}
    child = {"d0": _o("drop", "00000" + "11111" * 7), "d1": _o("drop", "11100" * 8), "d2": _o("drop", "10000" * 8)}
    read, draw, have = _drawer(base, child, 5)
    verdict = sequential_verdict(_gate(40), read, draw)
    assert verdict.passed and verdict.sequential["drawn"] == {"baseline": 0, "child": 5}
    assert [len(have["child"][c].passes) for c in ("d0", "d1", "d2")] == [10, 5, 5]
    assert verdict.sequential["categories"]["drop"]["samples"] == 10


def test_the_child_is_drawn_only_for_the_cases_the_broken_third_test_reads():
    # d0: S0 passes it 3 times in 5, the child failed its first 5 and passes it from then on; d1:
    # neither passed it in 5 (S0 never does); d2 lifts the category to its floor. The test reads
    # the case S0 passed most of those the child has not passed (d0): only d0 of the child is
    # drawn; S0's samples of d1, drawn for S0 alone once d0 is passed, rule a broken d1 out.
    base = {"d0": _o("drop", "10110" * 8), "d1": _o("drop", "0" * 40), "d2": _o("drop", "11000" * 8)}
    child = {"d0": _o("drop", "00000" + "11111" * 7), "d1": _o("drop", "0" * 40), "d2": _o("drop", "11111" * 8)}
    seq = _gate(40)
    decision = seq.decide(Drawn(_cut(base, 5)), Drawn(_cut(child, 5)))
    assert decision.verdict is None and decision.need == {"d0": 10} and decision.child_only == {"d0"}
    read, draw, have = _drawer(base, child, 5)
    verdict = sequential_verdict(seq, read, draw)
    assert verdict.passed and verdict.sequential["drawn"] == {"baseline": 3, "child": 5}
    assert [len(have["child"][c].passes) for c in ("d0", "d1", "d2")] == [10, 5, 5]
    assert "on 8 samples of S0" in verdict.sequential["categories"]["drop"]["why"]


def test_the_beta_is_split_over_s0s_steps_not_the_looks():
    seq = _gate(40, 1)
    assert seq.looks == (1, 2, 4, 8, 16, 32, 40)
    assert seq.baseline_steps == (8, 16, 32, 40) and sum(seq.betas) == pytest.approx(0.05)
    assert _gate(5, 1).baseline_steps == (5,) and _gate(5, 1).betas == pytest.approx((0.05,))


def _drawer(base: dict[str, CaseOutcome], child: dict[str, CaseOutcome], k: int):
    """(read, draw, have) over full sample tables: both sides start with their first k samples, and
    each draw reveals the next samples asked for."""
    full = {"baseline": base, "child": child}
    have = {side: {cid: CaseOutcome(o.category, o.passes[:k], o.must_pass) for cid, o in table.items()}
            for side, table in full.items()}

    def draw(side, ids, first, count):
        for cid in ids:
            assert len(have[side][cid].passes) == first
            o = full[side][cid]
            have[side][cid] = CaseOutcome(o.category, o.passes[: first + count], o.must_pass)

    return (lambda: (Drawn(dict(have["baseline"])), Drawn(dict(have["child"])))), draw, have


def test_early_rejection_inside_a_look_never_changes_a_verdict_and_settles_what_attribution_reads():
    """Over random worlds, the staged draws with early rejection decide as the full draws; with
    `settle`, the rejection's failing categories and broken must-pass cases are the full draws' too;
    a child the full draws accept is sampled in full."""
    rng = random.Random(20261204)
    stopped = saved = 0
    for trial in range(400):
        k = rng.choice([1, 2, 5])
        base, child = {}, {}
        for c in range(rng.randint(1, 4)):
            p_base = rng.random()
            p_child = p_base * rng.choice([0.0, 0.3, 0.7, 1.0])
            for i in range(rng.randint(1, 7)):
                must = rng.random() < 0.1
                base[f"c{c}-{i}"] = CaseOutcome(f"cat{c}", tuple(rng.random() < p_base for _ in range(8 * k)), must)
                child[f"c{c}-{i}"] = CaseOutcome(f"cat{c}", tuple(rng.random() < p_child for _ in range(8 * k)), must)
        seq = SequentialGate.plan(PerCategoryGate(rng.choice([0.0, 0.05, 0.2]), "noise-aware", rng.choice([0.05, 0.5])),
                                  k, 8 * k)
        read, draw, _ = _drawer(base, child, k)
        full = sequential_verdict(seq, read, draw)
        settle = bool(trial % 2)
        read, draw, have = _drawer(base, child, k)
        early = sequential_verdict(seq, read, draw, stage=rng.randint(1, 3), settle=settle)
        assert early.passed == full.passed, trial
        if early.passed:
            # S0's samples come first in a staged look: they may settle an earlier look before
            # the child's are all drawn (the full draw decides the same from the same prefixes).
            assert early.sequential["drawn"]["child"] <= full.sequential["drawn"]["child"], trial
            continue
        if settle:
            assert early.failed_categories() == full.failed_categories(), trial
            assert early.must_pass_broken == full.must_pass_broken, trial
        stop = early.sequential.get("stopped")
        if stop:
            stopped += 1
            saved += early.sequential["drawn"]["child"] < full.sequential["drawn"]["child"]
            assert all(len(have["child"][cid].passes) < stop["look"] for cid in stop["skipped"])
    assert stopped > 30 and saved > 30  # early stops inside looks were exercised, and saved draws


def test_a_look_stopped_early_is_said_in_the_summary_the_detail_and_the_review():
    from frames_cli.evolution.compare.verdict import gate_detail
    from frames_cli.evolution.report.review_markdown import sequential_lines

    # "drop": S0 always passes d0, the child never; "dip": the child fails p0, which S0 passes 3
    # times in 5, in its first 5 samples, and is a little below S0 on the others. Both are
    # undecided at k = 5 (below their floors, a broken case not ruled out); at k = 10 d0 alone
    # makes the rejection certain.
    base = {"d0": _o("drop", "1" * 20), **{f"p{i}": _o("dip", "10101" * 4) for i in range(3)}}
    child = {"d0": _o("drop", "0" * 20), "p0": _o("dip", "00000" + "10100" * 3),
             **{f"p{i}": _o("dip", "10100" * 4) for i in (1, 2)}}
    read, draw, have = _drawer(base, child, 5)
    verdict = sequential_verdict(_gate(), read, draw, stage=1)
    assert not verdict.passed and verdict.failed_categories() == ["drop"]
    assert verdict.sequential["stopped"]["look"] == 10 and verdict.sequential["stopped"]["skipped"] == [
        "p0",
        "p1",
        "p2",
    ]
    assert all(len(have["child"][f"p{i}"].passes) == 5 for i in range(3)) and len(have["child"]["d0"].passes) == 10
    assert "decided at k = 10 before 3 case(s) were sampled to it" in verdict.summary()
    assert "decided early at k = 10: 3 case(s) not sampled to it" in gate_detail(verdict.to_json())
    assert any("Rejected early at k = 10" in line and "`p0`, `p1`, `p2`" in line
               for line in sequential_lines(verdict.to_json()["sequential"]))
    read, draw, _ = _drawer(base, child, 5)
    assert not sequential_verdict(_gate(), read, draw).passed  # the full draws reject it too
