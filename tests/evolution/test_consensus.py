"""Vote filtering: a skill is rewritten only when ≥ q distinct diagnosers proposed it."""

from __future__ import annotations

import pytest

from frames_cli.errors import ConfigError
from frames_cli.evolution.propose.consensus import vote
from frames_cli.evolution.state.settings import resolve_threshold
from frames_cli.evolution.propose.diagnose import Proposal
from frames_cli.evolution.state.upgrades import legacy_rules

EXISTING = {"cancel-flight", "baggage"}


def prop(diagnoser, skill, change="Add the rule: \"x\"", cases=("c1",), pos=0, **kw):
    rules = tuple(legacy_rules(change))
    return Proposal(diagnoser, pos, skill, change, f"r{diagnoser}", tuple(cases), rules=rules, **kw)


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
    from frames_cli.evolution.propose.consensus import Blueprint

    assert Blueprint.from_json(bp.to_json()).to_json() == bp.to_json()


def test_paraphrases_become_one_change_with_every_vote_case_and_rationale():
    a = prop(
        0,
        "cancel-flight",
        'Add the rule: "Cancel only within 24 hours of booking, when the airline cancelled the flight, or in business '
        'class."',
        ("c1",),
    )
    b = prop(
        1,
        "cancel-flight",
        'Add the rule: "A reservation can be cancelled only within 24 hours of booking, when the airline cancelled the '
        'flight, or in business class."',
        ("c2",),
    )
    [bp] = vote([a, b], 2, EXISTING, 0.25).blueprints
    [change] = bp.changes
    assert change.votes == 2 and change.case_ids == ("c1", "c2") and change.rationales == ("r0", "r1")
    assert change.change in (a.change, b.change) and len(change.wordings) == 2
    assert len(vote([a, b], 2, EXISTING, None).blueprints[0].changes) == 2


def test_a_contradiction_is_one_change_marked_as_such_never_two_rules():
    a = prop(0, "baggage",
             'Add the rule: "Each economy passenger gets 2 free checked bags on every flight of the reservation."')
    b = prop(1, "baggage",
             'Add the rule: "Each economy passenger gets 1 free checked bag on every flight of the reservation."')
    [bp] = vote([a, b], 2, EXISTING, 0.25).blueprints
    [change] = bp.changes
    assert change.conflict.startswith("different numbers")
    assert "Add the rule" not in change.change and "at most one" in change.change
    assert bp.to_json(for_rewriter=True)["changes"][0]["wordings"] == list(change.wordings)


def test_blueprint_json_round_trips_and_reads_runs_made_before_merging():
    a = prop(0, "baggage", 'Add the rule: "x y z w."')
    [bp] = vote([a], 1, EXISTING, 0.25).blueprints
    assert type(bp).from_json(bp.to_json()) == bp
    # as state/upgrades.py leaves a run recorded before merging (and before rules)
    old = {"skill": "baggage", "new_skill": False, "description": "", "votes": 1,
           "changes": [{"change": "c", "rules": [], "rationale": "why / because", "case_ids": ["c1"],
                        "diagnosers": [0]}]}
    assert type(bp).from_json(old).changes[0].rationales == ("why / because",)
