"""The HTML report's pictures say what they show (issue 31).

Invariants:
1. A 0.2 % token difference is not stretched over the Pareto chart's width: the axis spans at
   least MIN_TOKEN_SPAN of the largest value, and never goes below 0.
2. Candidates at the same spot share one label instead of printing names on top of each other.
"""

from __future__ import annotations

from types import SimpleNamespace

from frames_cli.evolution.report.charts import MIN_TOKEN_SPAN, label_groups, token_axis


def cand(cid: str, tokens: float, rate: float, parent: str | None = "r0c0") -> SimpleNamespace:
    return SimpleNamespace(id=cid, mean_tokens=tokens, pass_rate=rate, parent_id=parent)


def test_a_tiny_token_difference_stays_a_tiny_part_of_the_axis() -> None:
    left, right = token_axis([1000.0, 1002.0])
    assert right - left >= MIN_TOKEN_SPAN * 1002.0
    assert (1002.0 - 1000.0) / (right - left) < 0.02
    assert token_axis([10.0, 5000.0])[0] == 0.0 or token_axis([10.0, 5000.0])[0] < 10.0
    assert token_axis([0.0])[0] == 0.0


def test_candidates_at_one_spot_share_a_label() -> None:
    cands = [cand("S0", 1000.0, 0.25, None), cand("r1c1", 1001.0, 0.25), cand("r2c1", 1300.0, 0.45),
             cand("r3c1", 1002.0, 0.50)]
    groups = label_groups(cands, 400.0)
    assert sorted(groups.values()) == [["S0", "r1c1"], ["r2c1"], ["r3c1"]]
