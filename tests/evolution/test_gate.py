"""Per-category gate against S0 (FRAMES): PR_c(child) ≥ (1 − ε)·PR_c(S0) for every category c."""

from __future__ import annotations

from frames_cli.evolution.gate import PerCategoryGate

S0 = {"cancel": 0.50, "baggage": 0.80, "refuse": 0.60}


def test_child_better_overall_but_one_category_beyond_tolerance_is_rejected():
    child = {"cancel": 1.00, "baggage": 0.70, "refuse": 0.90}  # overall up, baggage −12.5 % relative
    verdict = PerCategoryGate(0.05).check(S0, child)
    assert not verdict.passed
    assert verdict.failed_categories() == ["baggage"]
    assert "baggage" in verdict.summary()


def test_drop_within_tolerance_passes_and_floor_is_relative_to_s0():
    child = {"cancel": 0.50, "baggage": 0.76, "refuse": 0.60}  # 0.76 = 0.95 · 0.80 exactly
    verdict = PerCategoryGate(0.05).check(S0, child)
    assert verdict.passed
    floors = {c.category: c.floor for c in verdict.checks}
    assert abs(floors["baggage"] - 0.76) < 1e-12


def test_zero_tolerance_accepts_equal_and_rejects_any_drop():
    assert PerCategoryGate(0.0).check(S0, dict(S0)).passed
    assert not PerCategoryGate(0.0).check(S0, {**S0, "refuse": 0.59}).passed


def test_tolerance_one_accepts_a_collapsed_category():
    assert PerCategoryGate(1.0).check(S0, {**S0, "cancel": 0.0}).passed


def test_missing_category_fails():
    verdict = PerCategoryGate(0.05).check(S0, {"cancel": 1.0, "baggage": 1.0})
    assert verdict.failed_categories() == ["refuse"]
