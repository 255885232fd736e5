"""Consensus on real proposals: the thin-skill real-model trial's diagnoser answers (tests/fixtures/
real-model-trial/thin-diagnoser-answers.json, every answer as the model gave it, with a person's
label of which rule each proposal states).

Invariants:
1. Each blueprint has one change per distinct rule, with the votes and cases of all its sources.
2. With merging off (threshold 1), the same answers give one change per wording (the trial's 12).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from frames_cli.evolution.propose.consensus import vote
from frames_cli.evolution.propose.diagnose import Proposal
from frames_cli.evolution.state.upgrades import legacy_proposal

TRIAL = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "real-model-trial" / "thin-diagnoser-answers.json").read_text()
)
SKILLS = {"book-flight", "cancel-flight", "modify-flight", "refunds-and-compensation"}


def proposals(round_: dict) -> tuple[list[Proposal], dict[str, str]]:
    out, label = [], {}
    for d, answer in enumerate(round_["diagnosers"]):
        for i, p in enumerate(answer["proposals"]):
            # Recorded before answers carried `rules`: read at the edge, as state.json is.
            rules = tuple(legacy_proposal(p)["rules"])
            out.append(Proposal(d, i, p["skill"], p["change"], p["rationale"], tuple(p["case_ids"]), rules=rules))
            label[out[-1].rule_text] = p["rule"]
    return out, label


@pytest.mark.parametrize("round_", TRIAL["rounds"], ids=lambda r: f"round{r['round']}")
def test_one_change_per_distinct_rule_with_every_sources_votes(round_):
    props, label = proposals(round_)
    for bp in vote(props, 2, SKILLS, 0.25).blueprints:
        sources = [p for p in props if p.skill == bp.skill]
        by_rule: dict[str, list[Proposal]] = defaultdict(list)
        for p in sources:
            by_rule[label[p.rule_text]].append(p)
        assert len(bp.changes) == len(by_rule), bp.skill
        for change in bp.changes:
            [rule] = {label[w] for w in change.wordings}
            assert change.diagnosers == tuple(sorted({p.diagnoser for p in by_rule[rule]}))
            assert set(change.case_ids) == {c for p in by_rule[rule] for c in p.case_ids}
            assert len(change.rationales) == len({p.rationale for p in by_rule[rule]})
            assert not change.conflict


def test_modify_flight_in_round_three_is_four_rules_of_three_votes_each():
    props, _ = proposals(TRIAL["rounds"][2])
    merged = {bp.skill: bp for bp in vote(props, 2, SKILLS, 0.25).blueprints}["modify-flight"]
    assert [c.votes for c in merged.changes] == [3, 3, 3, 3]
    assert all(len(c.wordings) == 3 for c in merged.changes)
    unmerged = {bp.skill: bp for bp in vote(props, 2, SKILLS, 1.0).blueprints}["modify-flight"]
    assert len(unmerged.changes) == 12


def test_the_rewriter_sees_one_wording_per_agreed_rule():
    props, _ = proposals(TRIAL["rounds"][2])
    bp = {bp.skill: bp for bp in vote(props, 2, SKILLS, 0.25).blueprints}["modify-flight"]
    shown = bp.to_json(for_rewriter=True)
    assert all("wordings" not in c for c in shown["changes"])
    assert all(len(c["wordings"]) == 3 for c in bp.to_json()["changes"])
