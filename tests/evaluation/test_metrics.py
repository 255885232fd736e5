"""pass@k and pass^k against the exact binomial formulas."""

from __future__ import annotations

from math import comb

import pytest

from frames_cli.evaluation.metrics import mean_over_cases, pass_at_k, pass_hat_k

GRID = [(n, c, k) for n in range(1, 13) for c in range(n + 1) for k in range(1, n + 1)]


@pytest.mark.parametrize(("n", "c", "k"), GRID)
def test_pass_at_k_equals_binomial_form(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=1e-12)


@pytest.mark.parametrize(("n", "c", "k"), GRID)
def test_pass_hat_k_equals_binomial_form(n: int, c: int, k: int) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(comb(c, k) / comb(n, k), abs=1e-12)


def test_large_n_stays_finite_and_exact() -> None:
    n, c, k = 2000, 1500, 100
    assert pass_hat_k(n, c, k) == pytest.approx(comb(c, k) / comb(n, k), rel=1e-9)
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k), rel=1e-9)


def test_k_one_is_the_pass_rate_and_bad_arguments_raise() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4) and pass_hat_k(5, 2, 1) == pytest.approx(0.4)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)


def test_mean_over_cases() -> None:
    assert mean_over_cases([(4, 4), (4, 0)], 2) == pytest.approx(0.5)
    assert mean_over_cases([(4, 2)], 2, pass_hat_k) == pytest.approx(comb(2, 2) / comb(4, 2))
    assert mean_over_cases([], 2) is None
