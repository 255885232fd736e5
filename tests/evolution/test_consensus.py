"""Vote filtering: a skill is rewritten only when ≥ q distinct diagnosers proposed it."""

from __future__ import annotations

import pytest

from frames_cli.errors import ConfigError
from frames_cli.evolution.consensus import resolve_threshold, vote
from frames_cli.evolution.diagnose import Proposal

EXISTING = {"cancel-flight", "baggage"}


def prop(diagnoser, skill, change="Add the rule: \"x\"", cases=("c1",), pos=0, **kw):
    return Proposal(diagnoser, pos, skill, change, f"r{diagnoser}", tuple(cases), **kw)


PROPOSALS = [
    prop(0, "cancel-flight", cases=("c1",)),
    prop(0, "cancel-flight", change="Add the rule: \"y\"", cases=("c2",), pos=1),  # same diagnoser twice: one vote
    prop(1, "cancel-flight", cases=("c3",)),
    prop(2, "cancel-flight", change="Add the rule: \"y\"", cases=("c4",)),
    prop(1, "baggage", cases=("c5",)),
    prop(0, "pet-policy", new_skill=True, description="Pets in the cabin."),
    prop(2, "pet-policy", new_skill=True, description="Animals."),
]


def test_q1_keeps_every_proposed_skill():
    result = vote(PROPOSALS, resolve_threshold(1, 3), EXISTING)
    assert [b.skill for b in result.blueprints] == ["baggage", "cancel-flight", "pet-policy"]
    assert result.rejected == {}


def test_q2_drops_single_diagnoser_skills_and_counts_new_skills_by_name():
    result = vote(PROPOSALS, resolve_threshold(2, 3), EXISTING)
    assert [b.skill for b in result.blueprints] == ["cancel-flight", "pet-policy"]
    assert result.rejected == {"baggage": 1}
    pet = result.blueprints[1]
    assert pet.new_skill and pet.votes == 2 and pet.description == "Pets in the cabin."


def test_q_all_requires_every_diagnoser_and_merges_identical_changes():
    result = vote(PROPOSALS, resolve_threshold("all", 3), EXISTING)
    assert [b.skill for b in result.blueprints] == ["cancel-flight"]
    bp = result.blueprints[0]
    assert bp.votes == 3 and not bp.new_skill
    assert [(c.change, c.diagnosers, c.case_ids) for c in bp.changes] == [
        ('Add the rule: "x"', (0, 1), ("c1", "c3")),
        ('Add the rule: "y"', (0, 2), ("c2", "c4")),
    ]
    assert bp.case_ids == ["c1", "c2", "c3", "c4"]


def test_q_all_counts_a_failed_diagnoser_as_no_vote():
    two_of_three = [p for p in PROPOSALS if p.diagnoser != 2]
    assert vote(two_of_three, resolve_threshold("all", 3), EXISTING).blueprints == []


def test_threshold_above_diagnoser_count_is_a_config_error():
    with pytest.raises(ConfigError, match="vote_threshold"):
        resolve_threshold(4, 3)


def test_blueprint_json_round_trip():
    bp = vote(PROPOSALS, 1, EXISTING).blueprints[1]
    from frames_cli.evolution.consensus import Blueprint

    assert Blueprint.from_json(bp.to_json()).to_json() == bp.to_json()
