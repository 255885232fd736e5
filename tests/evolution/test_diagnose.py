"""Validation of diagnoser answers: what a proposal must be to count as a vote."""

from __future__ import annotations

from frames_cli.evolution.propose.diagnose import validate_answer
from frames_cli.llm.messages.types import ChatReply, ChatRequest

REQUEST = ChatRequest(role="diagnoser", messages=[])
EXISTING = {"cancel-flight", "baggage"}


def reply(proposals, error=None):
    return ChatReply(REQUEST, None if error else "{}", None if error else {"proposals": proposals}, error=error)


def prop(skill, case_ids, **kw):
    return {"skill": skill, "change": 'Add the rule: "x"', "rules": ["x"], "rationale": "r", "case_ids": case_ids, **kw}


def test_proposals_must_name_a_skill_and_cite_their_own_batch():
    result = validate_answer(
        1,
        ["c1", "c2"],
        reply(
            [
                prop("cancel-flight", ["c1", "c9"]),  # c9 is not in the batch: dropped from the citation
                prop("baggage", ["c9"]),  # cites nothing of its batch: dropped
                prop("../../etc", ["c1"]),  # not a skill, not a valid new name: dropped
                prop("pet-policy", ["c2"], new_skill=True, description="Pets."),
            ]
        ),
        EXISTING,
    )
    assert [(p.skill, p.case_ids, p.new_skill) for p in result.proposals] == [
        ("cancel-flight", ("c1",), False),
        ("pet-policy", ("c2",), True),
    ]
    assert all(p.diagnoser == 1 for p in result.proposals)
    assert len(result.dropped) == 2 and "cites no case" in result.dropped[0] and "../../etc" in result.dropped[1]


def test_a_failed_call_is_recorded_and_proposes_nothing():
    result = validate_answer(0, ["c1"], reply([], error="timeout after 4 retries"), EXISTING)
    assert result.proposals == [] and result.error == "timeout after 4 retries"
