"""The simulator's world: cases turn on rules other cases share; a case's own facts help it alone.

Invariants:
1. A case's rules are its evidence sentences that carry none of its own values (ids, names,
   amounts, dates): a sentence that carries one is a fact of the case, and cut it would read as a
   remnant ("Agent does not cancel."). Nor is a note to a grader ("Test that agent ...") or about
   the case's user a rule; a rule sentence inside such a note still is.
2. A general rule learnt from one case makes an unseen case that needs the same rule known.
3. A line carrying one case's values helps that case only: to another case it is about someone else.
(How a strong model reads policy prose, `policy_reading`: tests/sim/test_policy_reading.py.)
"""

from __future__ import annotations

from frames_cli.formats.case_record import case_from_dict
from frames_cli.sim.matching import knowledge
from frames_cli.sim.world import SimWorld

POLICY = "Basic economy bookings cannot be cancelled after 24 hours. Certificates are worth $100."


def _case(case_id: str, reservation: str, date: str) -> object:
    return case_from_dict(
        {
            "id": case_id,
            "category": "refuse-cancel",
            "source": {"kind": "test", "ref": case_id},
            "created": "2026-12-01",
            "task": {
                "input": {"text": f"Please cancel {reservation}.",
                          "fields": {"reservation_id": reservation, "created": date}},
                "expected": {"actions": []},
                "check": {"kind": "exact"},
                "answer_format": "json",
            },
            "diagnosis": {
                "evidence": [
                    f"Agent does not cancel {reservation}.",
                    "Agent refuses to cancel a basic economy booking made over a day ago.",
                    f"The booking {reservation} was made on {date}.",
                    "Test that agent refuses a late cancellation. Also user is not a native speaker.",
                ]
            },
        }
    )


A, B = _case("a", "H8Q05L", "2024-05-01"), _case("b", "ZZ9ABC", "2024-05-02")
WORLD = SimWorld.from_cases([A, B], [POLICY])


def known(case, text: str, policy_reading: float = 0.0) -> float:
    facts = WORLD.facts(case)
    return knowledge(case.diagnosis.evidence, facts.rules, facts.values, WORLD.policy, [text], policy_reading)


def test_rules_are_the_evidence_sentences_that_carry_no_case_value_and_address_the_agent() -> None:
    assert WORLD.facts(A).rules == ("Agent refuses to cancel a basic economy booking made over a day ago.",)
    assert WORLD.facts(B).rules == WORLD.facts(A).rules  # the same rule: the two cases share it
    assert {"h8q05l", "2024-05-01"} <= WORLD.facts(A).values


def test_a_general_rule_learnt_from_one_case_helps_an_unseen_case() -> None:
    rule = "- Agent refuses to cancel a basic economy booking made more than a day ago."
    assert known(A, rule) == 1.0 and known(B, rule) == 1.0
    assert known(B, "- Apologise for the wait.") == 0.0


def test_a_rule_inside_a_note_to_a_grader_is_still_a_rule() -> None:
    case = case_from_dict({**A.to_dict(), "id": "c", "diagnosis": {"evidence": [
        "Check that Agent does not cancel H8Q05L. Flights that have already departed cannot be cancelled.",
        "Agent update reservation H8Q05L to economy.",
    ]}})
    assert WORLD.facts(case).rules == ("Flights that have already departed cannot be cancelled.",)


def test_a_case_specific_line_helps_its_own_case_only() -> None:
    literal = "\n".join(f"- {e}" for e in A.diagnosis.evidence if "H8Q05L" in e)
    assert known(A, literal) > 0
    assert known(B, literal) == 0.0
