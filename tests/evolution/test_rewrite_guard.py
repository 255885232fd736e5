"""The guard between a rewriter's answer and the child commit.

Invariants:
1. Protected regions come out byte-identical or the rewrite is refused.
2. Name, metadata and back-links cannot change: only body and description come from the answer.
3. A body over the size limit is refused.
4. `plan_changes` refuses any skill outside the vote's blueprint, and leaves unchanged skills out.
5. A rewrite holding a credential (an API key echoed by the model) is refused.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from frames_cli.errors import FramesError
from frames_cli.evolution.propose.rewrite import (
    RewriteLimits,
    RewriteOutcome,
    plan_changes,
    retry_message,
    validate_rewrite,
)
from frames_cli.formats.skill_file import parse_skill
from frames_cli.formats.skill_set import SkillSet

SHA = "a" * 64
CANCEL = f"""---
name: cancel-flight
description: Cancel a reservation when the policy allows it.
metadata:
  frames-backlinks: "policies/airline.md#L10-L20 sha256:{SHA} Airline Agent Policy > Cancel flight"
---
# Cancel flight

<!-- frames:protected -->
Never cancel a flight that has already been flown.
<!-- /frames:protected -->

- Cancel within 24 hours of booking for a full refund.
"""
LIMITS = RewriteLimits(max_body_lines=20, retries=1)


@pytest.fixture
def skill():
    return parse_skill(CANCEL, Path("skills/cancel-flight/SKILL.md"))


def test_valid_rewrite_keeps_front_matter_bytes(skill):
    body = skill.body + "- Add the rule: basic economy cannot be cancelled.\n"
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": body}, LIMITS)
    assert errors == []
    assert text.startswith(CANCEL.split("# Cancel flight")[0])
    assert parse_skill(text, Path("x/SKILL.md")).backlinks == skill.backlinks


def test_changed_protected_region_is_refused(skill):
    body = skill.body.replace("Never cancel a flight", "Always cancel a flight")
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": body}, LIMITS)
    assert text is None and [e.kind for e in errors] == ["protected-region"]
    assert "protected regions changed" in errors[0].message


def test_removed_protected_region_is_refused(skill):
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": "# Cancel flight\n\nAnything goes.\n"}, LIMITS)
    assert text is None and any(e.kind == "protected-region" for e in errors)


def test_body_over_the_size_limit_is_refused(skill):
    body = skill.body + "".join(f"- rule {i}.\n" for i in range(30))
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": body}, LIMITS)
    assert text is None and any(e.kind == "too-long" and "at most 20" in e.message for e in errors)


def test_bad_description_is_refused(skill):
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": skill.body, "description": "<script>"}, LIMITS)
    assert text is None and any("description" in e.message for e in errors)


def test_new_skill_may_not_create_protected_regions():
    body = "# Pets\n<!-- frames:protected -->\nlocked\n<!-- /frames:protected -->\n"
    text, errors = validate_rewrite(None, "pet-policy", {"body": body, "description": "Pets."}, LIMITS)
    assert text is None and errors
    text, errors = validate_rewrite(None, "pet-policy", {"body": "# Pets\n- Pets fly in the cabin.\n",
                                                         "description": "Pets in the cabin."}, LIMITS)
    assert errors == [] and parse_skill(text, Path("skills/pet-policy/SKILL.md")).name == "pet-policy"


def test_plan_changes_refuses_skills_outside_the_blueprint(skill):
    parent = SkillSet([skill])
    new_text, _ = validate_rewrite(skill, "cancel-flight", {"body": skill.body + "- More.\n"}, LIMITS)
    outcome = RewriteOutcome("cancel-flight", new_text, 1)
    assert plan_changes(parent, [outcome], {"cancel-flight"}) == {"skills/cancel-flight/SKILL.md": new_text.encode()}
    with pytest.raises(FramesError, match="not in this round's blueprint"):
        plan_changes(parent, [outcome], {"baggage"})
    unchanged = RewriteOutcome("cancel-flight", CANCEL, 1)
    assert plan_changes(parent, [unchanged], {"cancel-flight"}) == {}


def test_rewrite_holding_a_credential_is_refused(skill, monkeypatch):
    monkeypatch.setenv("BOOKING_API_KEY", "bk-live-0123456789abcdef")
    for leaked in ("sk-proj-0123456789abcdefghij", "bk-live-0123456789abcdef"):
        body = skill.body + f"- Call the booking system with key {leaked}.\n"
        text, errors = validate_rewrite(skill, "cancel-flight", {"body": body}, LIMITS)
        assert text is None and any(e.kind == "credential" for e in errors)


ELIGIBLE = ("- Cancel a reservation only if it was booked within the last 24 hours, the airline cancelled the flight, "
            "or it is in business class.")
ELIGIBLE_AGAIN = ("- A reservation can be cancelled only if it was booked within the last 24 hours, the airline "
                  "cancelled the flight, or the cabin is business.")


def test_a_rule_stated_twice_is_refused(skill):
    body = skill.body + ELIGIBLE + "\n" + ELIGIBLE_AGAIN + "\n"
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": body}, LIMITS)
    assert text is None and any(e.kind == "duplicate-rule" and "state the same rule twice" in e.message for e in errors)


def test_near_alike_lines_the_parent_already_had_are_not_counted():
    parent = parse_skill(
        CANCEL.replace("- Cancel within 24 hours", ELIGIBLE + "\n" + ELIGIBLE_AGAIN + "\n- Cancel within 24 hours"),
        Path("skills/cancel-flight/SKILL.md"),
    )
    body = parent.body + "- Never cancel a reservation that holds a flight already flown.\n"
    text, errors = validate_rewrite(parent, "cancel-flight", {"body": body}, LIMITS)
    assert errors == [] and text is not None


@pytest.mark.parametrize("answer", [{}, {"description": ""}, {"description": "   "}])
def test_an_omitted_or_empty_description_keeps_the_current_one(skill, answer):
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": skill.body, **answer}, LIMITS)
    assert errors == [] and parse_skill(text, Path("x/SKILL.md")).description == skill.description


def test_a_new_skill_without_a_description_takes_the_blueprints():
    text, errors = validate_rewrite(
        None,
        "pet-policy",
        {"body": "# Pets\n\n- Pets travel in the cabin only in a carrier.\n", "description": ""},
        LIMITS,
        "Pets in the cabin.",
    )
    assert errors == [] and parse_skill(text, Path("pet-policy/SKILL.md")).description == "Pets in the cabin."


def test_the_rewriter_schema_accepts_an_empty_description():
    import jsonschema

    from frames_cli.llm.messages.schemas import REWRITE

    jsonschema.validate({"body": "x", "description": ""}, REWRITE)


RESTATED = (
    "- Check that the agent does not change the cabin for only some of the flights in a reservation."
    " The agent must not accept a payment below the actual cost of a change."
)
CABIN = "- The agent must never change the cabin for only some of the flights in a reservation."


def test_the_repeat_is_a_sentence_and_the_rest_of_its_line_is_a_new_rule():
    from frames_cli.evolution.propose.rules import duplicate_pairs, rule_sentences

    [pair] = duplicate_pairs(f"# Modify\n\n{CABIN}\n{RESTATED}\n", 0.4)
    assert (pair.first_line, pair.second_line) == (3, 4)
    assert pair.second.startswith("Check that the agent") and "payment" not in pair.second
    # "e.g." and "$1.50" do not end a sentence; a semicolon's clauses stay one rule
    assert rule_sentences("- Charge $1.50 per bag, e.g. a carry-on; refund it on request.") == [
        "Charge $1.50 per bag, e.g. a carry-on; refund it on request."
    ]


def test_the_simulated_rewriter_drops_the_named_sentence_and_keeps_the_new_rule(skill):
    """Validator and simulated rewriter agree on the retry message: the second answer passes and
    still holds the rule the restating line added."""
    from frames_cli.sim.base import SimCall
    from frames_cli.sim.rewriter import behave
    from frames_cli.sim.world import SimWorld
    from frames_cli.workspace.config import SimulatorConfig

    parent = parse_skill(CANCEL.replace("- Cancel within 24 hours", CABIN + "\n- Cancel within 24 hours"),
                         Path("skills/cancel-flight/SKILL.md"))
    answer = parent.body + RESTATED + "\n"
    text, errors = validate_rewrite(parent, "cancel-flight", {"body": answer}, LIMITS)
    assert text is None and any(e.kind == "duplicate-rule" and "state the same rule twice" in e.message for e in errors)
    # The retry shows the target (the parent) again; the simulated model rebuilds the same answer
    # from it and the blueprint, then acts on the errors' kind, line and text.
    blueprint = {"skill": "cancel-flight", "changes": [{"change": "Add the rule.", "rules": [RESTATED[2:]]}]}
    prompt = (
        f'<skill name="cancel-flight" target="true">\n{parent.body.rstrip()}\n</skill>\n\n'
        f"Blueprint:\n```json\n{json.dumps(blueprint)}\n```\n\nAnchor cases:\n```json\n[]\n```\n\n"
        + retry_message(errors)
    )
    config = SimulatorConfig(p_forget=0.0, p_verbose=0.0)
    body = behave(SimCall("rewriter", prompt, 0, config, SimWorld()))["body"]
    text, errors = validate_rewrite(parent, "cancel-flight", {"body": body}, LIMITS)
    assert errors == [], errors
    assert "The agent must not accept a payment below the actual cost of a change." in body
    assert "Check that the agent" not in body and body.count("only some of the flights") == 1


def test_two_policy_sentences_put_back_are_not_one_rule_stated_twice(skill):
    # A cut skill gets the policy's two cabin-change price rules back: alike by words, two rules.
    from frames_cli.evolution.propose.policy_sentences import policy_sections

    policy = (Path(__file__).parents[2] / "policies" / "airline.md").read_bytes()
    higher, lower = (line[2:] for line in policy.decode().splitlines() if "price after cabin change is" in line)
    body = skill.body + f"- {higher}\n- {lower}\n"
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": body}, LIMITS)
    assert text is None and any("the same rule twice" in e.message for e in errors)
    files = {"policies/airline.md": policy,
             "policies/LICENSE": b"If the price is higher the user pays the difference, and so on."}
    with_policy = dataclasses.replace(LIMITS, policy=policy_sections(files))
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": body}, with_policy)
    assert errors == [] and higher in text and lower in text
    # Emphasis, case and the full stop do not hide them from the policy; a blockquote neither.
    variant = skill.body + f"- **{higher[:-1]}**\n> {lower.lower()}\n"
    assert validate_rewrite(skill, "cancel-flight", {"body": variant}, with_policy)[1] == []
    # One policy sentence written twice is still a repeat; so is a rule the policy restates in
    # another section ("All payment methods ..." under Book flight, "The payment method ..." under Modify flight).
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": body + f"- {higher}\n"}, with_policy)
    assert text is None and any("the same rule twice" in e.message for e in errors)
    payment = [line[2:] for line in policy.decode().splitlines() if "must already be in user profile" in line]
    assert len(payment) == 2
    text, errors = validate_rewrite(skill, "cancel-flight", {"body": skill.body + "".join(f"- {p}\n" for p in payment)},
                                    with_policy)
    assert text is None and any("the same rule twice" in e.message for e in errors)


def test_policy_sections_read_the_policy_as_coldstart_does():
    from frames_cli.evolution.propose.policy_sentences import policy_sections
    from frames_cli.evolution.propose.rules import sentence_key

    policy = (
        "---\ntitle: Fees\n---\n# Fees\n\n## Bags\n\nEach extra bag costs 50 dollars for an economy\npassenger on "
        "every flight. {% include 'note.html' %}\n\n- Each extra bag costs 30 dollars for a business passenger.\n  It "
        "is paid on every flight of the reservation.\n\n| Bag | Fee |\n|---|---|\n| extra | 50 |\n"
    )
    sections = policy_sections({"policies/fees.md": policy.encode(),
                                "policies/.hidden.md": b"A hidden sentence about bags and fees here."})
    # A hard-wrapped paragraph is one sentence, a list item takes its continuation line, the tag is not text.
    assert sentence_key("Each extra bag costs 50 dollars for an economy passenger on every flight.") in sections
    assert sentence_key("It is paid on every flight of the reservation.") in sections
    assert not any("hidden" in key or "title" in key or "|" in key or "include" in key for key in sections)
    assert len({place for places in sections.values() for place in places}) == 1
