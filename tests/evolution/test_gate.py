"""The gate against S0 (FRAMES): the per-category floor, case-level flips, the noise-aware rule, must-pass cases.

Invariants:
1. The paper rule rejects exactly the categories below (1 − ε)·PR_c(S0).
2. The noise-aware rule rejects a category only when it is below its floor and its drop is significant.
3. A must-pass case that went from pass to fail rejects the child under either rule, and is named.
4. The warning before a run names every too-small category and the cases it needs.
5. The exact test equals its definition (enumeration of every split) and McNemar's test at k = 1.
6. The one-case test's p-value is the largest chance over every shared pass probability, so the
   noise-aware rule rejects a child as good as S0 at most α of the time, even in the worst case
   p = ½; it rejects a category where one case broke although a gain on another hides the drop.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from frames_cli.evolution.compare.gate import (
    PerCategoryGate,
    noise_levels,
    small_categories_warning,
    too_small_categories,
)
from frames_cli.evolution.compare.verdict import CaseOutcome, outcomes_from_results
from frames_cli.evolution.compare.paired_test import broken_case_p_value, cases_needed, upper_p_value


def outcomes(spec: dict[str, list[str]], must_pass: set[str] = frozenset()) -> dict[str, CaseOutcome]:
    """{category: ["1", "0", "110", ...]} → outcomes; one string per case, one digit per sample."""
    out = {}
    for cat, cases in spec.items():
        for i, bits in enumerate(cases):
            cid = f"{cat}-{i}"
            out[cid] = CaseOutcome(cat, tuple(b == "1" for b in bits), cid in must_pass)
    return out


S0 = outcomes({"cancel": ["1", "0"], "baggage": ["1"] * 4 + ["0"], "refuse": ["1"] * 3 + ["0"] * 2})


def test_child_better_overall_but_one_category_beyond_tolerance_is_rejected():
    child = outcomes({"cancel": ["1", "1"], "baggage": ["1"] * 3 + ["0", "0"], "refuse": ["1"] * 4 + ["0"]})
    verdict = PerCategoryGate(0.05).check(S0, child)
    assert not verdict.passed
    assert verdict.failed_categories() == ["baggage"]
    assert "baggage" in verdict.summary()
    baggage = next(c for c in verdict.checks if c.category == "baggage")
    assert baggage.pass_to_fail == ["baggage-3"] and baggage.fail_to_pass == []
    assert (baggage.baseline, baggage.child, baggage.n) == (0.8, 0.6, 5)


def test_floor_is_relative_to_s0_and_zero_tolerance_accepts_equal():
    assert PerCategoryGate(0.0).check(S0, dict(S0)).passed
    check = next(c for c in PerCategoryGate(0.25).check(S0, S0).checks if c.category == "baggage")
    assert abs(check.floor - 0.6) < 1e-12
    # baggage 0.8 → 0.6 is exactly the floor at ε = 0.25
    child = outcomes({"cancel": ["1", "0"], "baggage": ["1"] * 3 + ["0", "0"], "refuse": ["1"] * 3 + ["0"] * 2})
    assert PerCategoryGate(0.25).check(S0, child).passed


def test_tolerance_one_accepts_a_collapsed_category():
    child = outcomes({"cancel": ["0", "0"], "baggage": ["1"] * 4 + ["0"], "refuse": ["1"] * 3 + ["0"] * 2})
    assert PerCategoryGate(1.0).check(S0, child).passed


def test_missing_category_fails_and_missing_cases_count_as_failed():
    child = {cid: o for cid, o in S0.items() if o.category != "refuse"}
    verdict = PerCategoryGate(0.05).check(S0, child)
    assert verdict.failed_categories() == ["refuse"]
    assert next(c for c in verdict.checks if c.category == "refuse").child is None
    partial = {cid: o for cid, o in S0.items() if cid != "baggage-0"}
    assert PerCategoryGate(0.05).check(S0, partial).failed_categories() == ["baggage"]


def test_must_pass_flip_rejects_whatever_the_averages_say():
    base = outcomes({"sanctions": ["1"] * 9 + ["0"]}, must_pass={"sanctions-2"})
    # 9 → 9 passes (the rate is unchanged), but the must-pass case went from pass to fail.
    child = outcomes({"sanctions": ["1", "1", "0"] + ["1"] * 6 + ["1"]}, must_pass={"sanctions-2"})
    for rule in ("paper", "noise-aware"):
        verdict = PerCategoryGate(0.05, rule).check(base, child)
        assert not verdict.passed
        assert verdict.failed_categories() == []
        assert verdict.must_pass_broken == ["sanctions-2"]
        assert "sanctions-2" in verdict.summary()
    # A must-pass case that S0 failed too is no flip.
    fine = outcomes({"sanctions": ["1"] * 9 + ["0"]}, must_pass={"sanctions-9"})
    assert PerCategoryGate(0.05).check(fine, fine).passed


def test_noise_aware_rule_does_not_reject_one_flip_of_a_noisy_case():
    base = outcomes({"baggage": ["1", "1"], "cancel": ["1"] * 10})
    child = outcomes({"baggage": ["1", "0"], "cancel": ["1"] * 10})
    assert not PerCategoryGate(0.05, "paper").check(base, child).passed
    verdict = PerCategoryGate(0.05, "noise-aware").check(base, child)
    assert verdict.passed
    baggage = next(c for c in verdict.checks if c.category == "baggage")
    assert baggage.p_value == 0.5 and baggage.pass_to_fail == ["baggage-1"]
    assert "noise explains it" in baggage.why


def test_noise_aware_rule_rejects_a_drop_the_data_shows():
    # 12 of 12 cases passed every one of 3 samples in S0; the child fails 6 of them in every sample.
    base = outcomes({"refuse": ["111"] * 12, "book": ["111"] * 4})
    child = outcomes({"refuse": ["111"] * 6 + ["000"] * 6, "book": ["111"] * 4})
    verdict = PerCategoryGate(0.05, "noise-aware", alpha=0.05).check(base, child)
    assert verdict.failed_categories() == ["refuse"]
    refuse = next(c for c in verdict.checks if c.category == "refuse")
    assert refuse.p_value == pytest.approx(20.0**-6)
    assert "significant" in refuse.why


def test_noise_aware_rule_never_rejects_above_the_floor():
    base = outcomes({"refuse": ["1"] * 100})
    child = outcomes({"refuse": ["1"] * 96 + ["0"] * 4})  # significant at α, but within ε = 5 %
    assert PerCategoryGate(0.05, "noise-aware").check(base, child).passed


def test_outcomes_from_results_orders_samples_and_marks_must_pass():
    results = [
        {"case_id": "a", "category": "c", "sample": 1, "passed": False},
        {"case_id": "a", "category": "c", "sample": 0, "passed": True},
        {"case_id": "b", "category": "c", "sample": 0, "passed": True},
    ]
    got = outcomes_from_results(results, {"b"})
    assert got["a"] == CaseOutcome("c", (True, False), False)
    assert got["b"].must_pass and got["b"].passed == 1


def test_unequal_samples_are_refused():
    with pytest.raises(ValueError, match="equal numbers of samples"):
        PerCategoryGate(0.05).check(outcomes({"c": ["11"]}), outcomes({"c": ["1"]}))


def test_warning_names_every_too_small_category_with_the_cases_it_needs():
    counts = {"baggage": 2, "cancel": 3, "passengers": 3, "refuse": 8, "refuse-cancel": 10, "book": 7}
    small = too_small_categories(counts, samples=1, alpha=0.05)
    needed = cases_needed(1, 0.05 / len(counts))
    assert needed == 7  # 2^-7 ≤ 0.05/6 < 2^-6
    assert [s.category for s in small] == ["baggage", "cancel", "passengers"]
    warning = small_categories_warning(small, 1, "noise-aware")
    for s in small:
        assert f"{s.category} ({s.n} cases, needs {needed})" in warning
    assert "refuse" not in warning.replace("refuse-cancel", "")
    assert small_categories_warning(too_small_categories(counts, samples=5, alpha=0.05), 5, "paper") is None


def test_evolve_names_every_too_small_category_before_its_first_model_call(tmp_path, monkeypatch):
    from frames_cli.evolution.run.driver import EvolveOptions, evolve
    from frames_cli.evolution.state.run_warnings import SmallCategories
    from frames_cli.llm.client.answer import Answerer
    from frames_cli.workspace.layout import Workspace

    from helpers.airline import CONFIG, build_repo, make_cases

    # cancel keeps its 8 cases; baggage 3 and compensation 1: at k = 1 among 3 categories the
    # exact test needs 6 cases (2^-6 ≤ 0.05 / 3).
    cases = [c for c in make_cases() if c["category"] == "cancel"
             or c["id"] in ("baggage-4-0", "baggage-4-1", "baggage-5-0", "compensation-8-0")]
    repo = build_repo(tmp_path / "ws", {**CONFIG, "evolution": {**CONFIG["evolution"], "max_rounds": 1}}, cases)
    calls, events = [], []
    lookup = Answerer.lookup  # every request, cached or not, on every path of the model client
    monkeypatch.setattr(Answerer, "lookup", lambda self, request: calls.append(request) or lookup(self, request))
    evolve(Workspace.open(repo.root), EvolveOptions(), on_event=lambda e: events.append((e, len(calls))))
    (event, calls_before), = [(e, n) for e, n in events if isinstance(e, SmallCategories)]
    assert calls_before == 0 and calls  # before the first model call, in a run that made calls
    assert [s.category for s in event.small] == ["baggage", "compensation"]
    warning = str(event)
    assert "baggage (3 cases, needs 6), compensation (1 case, needs 6)" in warning and "cancel" not in warning
    assert "one flip of a noisy case can decide their verdict" in warning  # the paper's rule, the default


def _enumerated_p(strata: list[tuple[int, int]], k: int) -> float:
    """P(ΣA ≥ Σa) by enumerating every way to deal each case's 2k results between S0 and the child."""
    observed = sum(a for a, _ in strata)
    pools = []
    for a, b in strata:
        results = [1] * (a + b) + [0] * (2 * k - a - b)
        pools.append([sum(results[i] for i in chosen) for chosen in itertools.combinations(range(2 * k), k)])
    hits = sum(1 for combo in itertools.product(*pools) if sum(combo) >= observed)
    return hits / math.prod(len(p) for p in pools)


def test_exact_test_equals_its_definition_and_mcnemar():
    rng = random.Random(7)
    for _ in range(60):
        k = rng.randint(1, 3)
        strata = [(rng.randint(0, k), rng.randint(0, k)) for _ in range(rng.randint(1, 3))]
        assert upper_p_value(strata, k) == pytest.approx(_enumerated_p(strata, k), abs=1e-12)
    # McNemar's exact test: 5 losses, 1 win → P(Bin(6, ½) ≥ 5) = 7/64.
    assert upper_p_value([(1, 0)] * 5 + [(0, 1)] + [(1, 1), (0, 0)], 1) == pytest.approx(7 / 64)
    assert upper_p_value([(1, 1), (0, 0)], 1) == 1.0


def _tail(d: int, k: int, p: float) -> float:
    """P(a − b ≥ d) for a, b independent Binomial(k, p), by enumeration."""
    law = [math.comb(k, x) * p**x * (1 - p) ** (k - x) for x in range(k + 1)]
    return sum(law[a] * law[b] for a in range(k + 1) for b in range(k + 1) if a - b >= d)


def test_one_case_test_is_the_worst_case_over_every_pass_probability():
    for k in range(1, 7):
        for a in range(k + 1):
            for b in range(a):
                worst = max(_tail(a - b, k, g / 400) for g in range(401))
                assert broken_case_p_value(a, b, k) == pytest.approx(worst, rel=1e-9)
    assert broken_case_p_value(5, 0, 5) == 4.0**-5 and broken_case_p_value(2, 3, 5) == 1.0
    assert broken_case_p_value(5, 1, 5) < broken_case_p_value(5, 2, 5)  # grows with the child's passes


def test_noise_aware_rule_rejects_a_broken_case_that_a_gain_elsewhere_hides():
    # S0 passed cancel-0 in all 5 samples, the child in none; the child gained one sample on cancel-1.
    base = outcomes({"cancel": ["11111", "00000"], "book": ["11111"] * 4})
    child = outcomes({"cancel": ["00000", "00001"], "book": ["11111"] * 4})
    verdict = PerCategoryGate(0.05, "noise-aware").check(base, child)
    cancel = next(c for c in verdict.checks if c.category == "cancel")
    assert cancel.p_value > cancel.level  # the net test alone would let it through
    assert verdict.failed_categories() == ["cancel"] and cancel.broken == ["cancel-0"]
    assert "cancel-0 broke" in cancel.why
    # One sample lost of five on that case is what noise does: accepted.
    child = outcomes({"cancel": ["01111", "00000"], "book": ["11111"] * 4})
    assert PerCategoryGate(0.05, "noise-aware").check(base, child).passed


def test_levels_leave_small_k_to_the_net_test_and_hold_alpha():
    # At k ≤ 4 no single case can reach α/2mn among 9 categories: the net test keeps all of α/m.
    for k in range(1, 5):
        assert noise_levels(3, k, 9, 0.05) == (0.05 / 9, 0.0)
    net, case = noise_levels(2, 10, 9, 0.05)
    assert (net, case) == (pytest.approx(0.05 / 18), pytest.approx(0.05 / 36))
    # Under the worst case for the one-case test (every case passes with probability ½, in S0 and in
    # the child alike), the rule rejects a child as good as S0 at most α of the time.
    rng = random.Random(12)
    sizes = {"a": 2, "b": 3, "c": 8}
    gate = PerCategoryGate(0.0, "noise-aware", 0.05)
    def draw():
        return outcomes({cat: ["".join(rng.choice("01") for _ in range(10)) for _ in range(n)]
                         for cat, n in sizes.items()})

    rejected = sum(not gate.check(draw(), draw()).passed for _ in range(2000))
    assert rejected / 2000 <= 0.05
