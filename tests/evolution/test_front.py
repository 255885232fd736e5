"""Pareto front over (pass rate, −mean tokens per case).

Invariants:
1. A point another point dominates is never on the front.
2. Points that trade pass rate against tokens are all on the front.
3. Equal objectives (also up to float noise): only the oldest stays.
4. The same key listed twice counts once.
5. The front does not depend on the order points are listed in.
"""

from __future__ import annotations

import itertools

from frames_cli.evolution.compare.front import FrontPoint, dominates, pareto_front


def keys(points):
    return [p.key for p in points]


def test_dominated_point_is_not_on_the_front():
    a = FrontPoint("a", 0.8, 100.0, 0)
    b = FrontPoint("b", 0.7, 120.0, 1)  # worse on both
    c = FrontPoint("c", 0.8, 150.0, 2)  # same rate, more tokens
    assert dominates(a, b) and dominates(a, c) and not dominates(b, a)
    assert keys(pareto_front([a, b, c])) == ["a"]


def test_trade_offs_all_stay_sorted_best_rate_first():
    cheap = FrontPoint("cheap", 0.6, 50.0, 0)
    good = FrontPoint("good", 0.9, 200.0, 1)
    mid = FrontPoint("mid", 0.75, 100.0, 2)
    assert keys(pareto_front([cheap, good, mid])) == ["good", "mid", "cheap"]


def test_equal_objectives_keep_the_oldest_even_with_float_noise():
    old = FrontPoint("c1", 0.1 + 0.2, 100.0, 1)
    new = FrontPoint("c2", 0.3, 100.0 + 1e-9, 2)
    assert not dominates(old, new) and not dominates(new, old)
    assert keys(pareto_front([new, old])) == ["c1"]


def test_same_key_twice_counts_once():
    p = FrontPoint("c1", 0.5, 10.0, 1)
    assert keys(pareto_front([p, p])) == ["c1"]


def test_front_is_independent_of_listing_order():
    pts = [
        FrontPoint("a", 0.5, 10.0, 0),
        FrontPoint("b", 0.5, 10.0, 3),
        FrontPoint("c", 0.7, 30.0, 1),
        FrontPoint("d", 0.6, 40.0, 2),
        FrontPoint("e", 0.7, 20.0, 4),
    ]
    fronts = {tuple(keys(pareto_front(list(perm)))) for perm in itertools.permutations(pts)}
    assert fronts == {("e", "a")}
