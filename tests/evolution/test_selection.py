"""Round-robin parent selection over the Pareto front; batching of failures for diagnosers."""

from __future__ import annotations

from frames_cli.evolution.propose.diagnose import make_batches
from frames_cli.evolution.compare.front import FrontPoint
from frames_cli.evolution.round.selection import RoundRobinSelector


def test_round_robin_visits_members_in_creation_order_then_repeats():
    front = [FrontPoint("c3", 0.9, 200, 3), FrontPoint("c0", 0.5, 50, 0), FrontPoint("c1", 0.7, 100, 1)]
    picks: dict[str, int] = {}
    order = []
    for _ in range(6):
        key = RoundRobinSelector().choose(front, picks)
        picks[key] = picks.get(key, 0) + 1
        order.append(key)
    assert order == ["c0", "c1", "c3", "c0", "c1", "c3"]


def test_new_front_member_is_picked_next():
    front = [FrontPoint("c0", 0.5, 50, 0), FrontPoint("c4", 0.8, 60, 4)]
    assert RoundRobinSelector().choose(front, {"c0": 2, "c1": 1}) == "c4"


def test_batches_are_disjoint_seeded_and_never_repeated():
    ids = [f"case-{i}" for i in range(20)]
    batches = make_batches(ids, 8, 3, seed=7, round_no=1)
    assert [len(b) for b in batches] == [8, 8, 4]
    assert sorted(sum(batches, [])) == sorted(ids)
    assert batches == make_batches(list(reversed(ids)), 8, 3, seed=7, round_no=1)
    assert batches != make_batches(ids, 8, 3, seed=7, round_no=2)
    one = make_batches(ids, "all", 3, seed=7, round_no=1)
    # One disjoint batch of all 20; the other diagnosers get resampled subsets of 19, all different.
    assert [len(b) for b in one] == [20, 19, 19] and len({frozenset(b) for b in one}) == 3
    capped = make_batches(ids, 1, 3, seed=7, round_no=1)
    assert [len(b) for b in capped] == [1, 1, 1] and len({b[0] for b in capped}) == 3
    assert make_batches([], 8, 3, seed=7, round_no=1) == []
    two = make_batches(["a", "b"], 8, 3, seed=7, round_no=1)
    assert sorted(map(sorted, two)) == [["a"], ["a", "b"], ["b"]]
    assert make_batches(["a"], 8, 3, seed=7, round_no=1) == [["a"]]
