"""The guards of evolution/propose/guards.py: no case facts as rules, no policy sentence dropped silently.

Invariants:
1. A proposal whose rule names a case's reservation id (or a person's name, an amount, a date of a
   case) is dropped, with the value and the case in the diagnoser result's `dropped`.
2. Values the policy states, and small counts, are rule values: a proposal with them is kept.
3. A rewrite that drops or rewords a sentence its skill holds from the policy is rejected with an
   error naming the sentence, retried with the error, and accepted once the sentence is back.
4. A blueprint that quotes the sentence, asks to remove it and cites a case may remove it; the
   outcome lists the sentence with the blueprint line that asked.
5. A line a rewrite adds that carries a case value is an error too.
6. Places and written-out dates and times are case values, read from the case's own record (its
   capitalised field values, the capitalised words inside its sentences, its ISO dates); words the
   policy uses in any case are rule words.
7. A proposal (or an added line) that reads as a sentence with its values cut out is dropped, not
   kept as a stub.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from frames_cli.evolution.propose.consensus import Blueprint, Change
from frames_cli.evolution.propose.diagnose import DiagnoserResult, Proposal
from frames_cli.evolution.propose.case_index import CaseValues
from frames_cli.evolution.propose.guards import RewriteGuard, guard_proposals
from frames_cli.evolution.propose.policy_keeper import PolicyKeeper
from frames_cli.evolution.propose.rewrite import RewriteLimits, rewrite
from frames_cli.formats.case import Case
from frames_cli.formats.case_record import case_from_dict
from frames_cli.formats.skill import text_sha256
from frames_cli.formats.skill_set import SkillSet
from frames_cli.evolution.state.upgrades import legacy_rules

POLICY = """# Airline policy

## Cancel flight

The agent must first obtain the user id and the reservation id.
A booking can be cancelled within 24 hours for a full refund.
Compensation is a certificate of $100 per passenger.

## Payment

Refuse a cancellation the policy does not allow; charge only the payment method the user names.
"""
SPAN = POLICY.splitlines()[2:7]  # lines 3-7: the section
BODY = "## Cancel flight\n\n" + "\n".join(SPAN[3:]) + "\n"


def _skill_files(body: str = BODY) -> dict[str, bytes]:
    link = f"policies/airline.md#L3-L7 sha256:{text_sha256(chr(10).join(SPAN))} Airline policy > Cancel flight"
    text = (f"---\nname: cancel-flight\ndescription: Cancel a reservation.\nmetadata:\n  frames-backlinks: \"{link}\"\n"
            f"---\n{body}")
    return {"skills/cancel-flight/SKILL.md": text.encode()}


def _case(case_id: str, text: str, evidence: list[str], name: str = "Emma") -> Case:
    return case_from_dict(
        {
            "id": case_id,
            "category": "cancel",
            "source": {"kind": "test", "ref": case_id},
            "created": "2026-12-01",
            "task": {
                "input": {"text": text, "fields": {"customer": {"first_name": name, "last_name": "Kim"}}},
                "expected": {"actions": []},
                "check": {"kind": "exact"},
                "answer_format": "json",
            },
            "diagnosis": {"evidence": evidence},
        }
    )


CASES = [
    _case("c1", "Cancel reservation EHGLP3 please, booked on 2024-05-10.", ["Agent does not cancel EHGLP3."]),
    _case("c2", "Cancel my trip H8Q05L, it cost $1386.", ["The total cost is between $1380 and $1390."], name="Noah"),
    _case("c3", "My flight was delayed: what compensation do my 2 passengers get, and can you charge my card?",
          ["The agent offers a certificate."]),
]


def _values() -> CaseValues:
    return CaseValues.build(CASES, [POLICY])


def _result(*changes: str, cites: tuple[str, ...] = ("c1",)) -> DiagnoserResult:
    props = [
        Proposal(0, i, "cancel-flight", change, "why", cites, rules=tuple(legacy_rules(change)))
        for i, change in enumerate(changes)
    ]
    return DiagnoserResult(0, list(cites), props)


def test_a_proposal_naming_a_cases_reservation_id_is_dropped_with_its_reason() -> None:
    result = _result('Add the rule: "Agent does not cancel EHGLP3."',
                     'Add the rule: "Refuse a cancellation the policy does not allow."')

    lines = guard_proposals([result], _values())

    assert [p.position for p in result.proposals] == [1]
    assert len(lines) == 1 and result.dropped == lines
    assert "`EHGLP3` (from case c1)" in lines[0] and "proposal 0 for `cancel-flight`" in lines[0]


def test_names_amounts_and_dates_of_a_case_are_case_values() -> None:
    values = _values()
    assert [h.value for h in values.specific("Tell Noah the total is $1386.")] == ["Noah", "$1386"]
    assert [h.value for h in values.specific("Bookings made on 2024-05-10 cannot be cancelled.")] == ["2024-05-10"]
    assert [h.value for h in values.specific("The cost must be between $1380 and $1390.")] == ["$1380", "$1390"]


def _traveller(case_id: str, text: str, city: str, date: str) -> Case:
    return case_from_dict(
        {
            "id": case_id,
            "category": "book",
            "source": {"kind": "test", "ref": case_id},
            "created": "2026-12-01",
            "task": {
                "input": {"text": text,
                          "fields": {"flight": {"origin": "JFK", "city": city, "date": date, "cabin": "economy"}}},
                "expected": {"actions": []},
                "check": {"kind": "exact"},
                "answer_format": "json",
            },
            "diagnosis": {"evidence": ["Agent books the Gold member's flight."]},
        }
    )


def test_places_and_written_dates_from_a_cases_record_are_case_values() -> None:
    cases = [
        _traveller("t1", "I fly from Philadelphia to LaGuardia. Gold members fly free.", "San Antonio", "2024-05-17"),
        _traveller("t2", "Dallas is home. I leave at 3:30 pm.", "Boston", "2024-06-02"),
    ]
    values = CaseValues.build(cases, [POLICY + "Gold members get free bags in economy.\n"])

    def found(text: str) -> list[tuple[str, tuple[str, ...]]]:
        return [(h.value, h.case_ids) for h in values.specific(text)]

    assert found("Book the flight to LaGuardia from JFK on May 17.") == [
        ("LaGuardia", ("t1",)),
        ("JFK", ("t1", "t2")),
        ("May 17", ("t1",)),
    ]
    assert found("Flights to San Antonio leave on the 17th of May, 2024.") == [
        ("San Antonio", ("t1",)),
        ("17th of May, 2024", ("t1",)),
    ]
    assert found("Leave at 3:30 PM, as Boston wants.") == [("3:30 PM", ("t2",)), ("Boston", ("t2",))]
    # "Dallas" starts its sentence in t2's text, so t2's record does not say it is a name; "Gold"
    # and "Economy" are words of the policy; a month with no day is no date.
    assert found("Dallas: Gold members fly Economy in May.") == []


def test_a_proposal_left_as_a_stub_once_its_values_are_cut_is_dropped() -> None:
    result = _result(
        'Add the rule: "The total cost that the agent mentions is between and."',
        'Add the rule: "Agent assigns payment to."',
        'Add the rule: "Agent uses the payment id:"',
        'Add the rule: "Charge the payment method the user names, and only if the user wants to."',
        cites=("c1", "c3"),
    )

    lines = guard_proposals([result], _values())

    assert [p.position for p in result.proposals] == [3]
    assert [line.split("(")[2].split(")")[0] for line in lines] == ["'between and'", "'to .'", "':'"]
    assert all("values cut out" in line for line in lines)


def test_values_the_policy_states_and_small_counts_are_rule_values() -> None:
    result = _result(
        'Add the rule: "Offer a certificate of $100 per passenger, within 24 hours, for at most 5 passengers."',
        cites=("c3",),
    )

    assert guard_proposals([result], _values()) == [] and len(result.proposals) == 1


def _blueprint(*changes: tuple[str, tuple[str, ...]]) -> Blueprint:
    return Blueprint("cancel-flight", False, "", tuple(Change(c, ("why",), ids, (0, 1)) for c, ids in changes), 2)


def _keeper() -> tuple[PolicyKeeper, SkillSet]:
    s0 = SkillSet.from_files(_skill_files())
    return PolicyKeeper.build(s0, {"policies/airline.md": POLICY.encode()}), s0


def test_the_keeper_holds_the_back_linked_sentences_the_s0_body_contains() -> None:
    keeper, _ = _keeper()
    assert [p.text for p in keeper.kept["cancel-flight"]] == [
        "A booking can be cancelled within 24 hours for a full refund.",
        "Compensation is a certificate of $100 per passenger.",
    ]  # the first sentence is not in the body, so it is not the skill's to keep
    assert {p.source for p in keeper.kept["cancel-flight"]} == {"policies/airline.md:3-7"}


def test_a_short_list_item_of_the_policy_is_kept_as_an_item() -> None:
    policy = (
        "# Airline policy\n\n## Profile\n\nEach user has a profile containing:\n\n- user id\n- date of birth\n- email\n"
    )
    span = policy.splitlines()[2:9]
    body = "## Profile\n\nEach user has a profile containing:\n\n- user id\n- date of birth\n- email\n"
    link = f"policies/airline.md#L3-L9 sha256:{text_sha256(chr(10).join(span))} Airline policy > Profile"
    text = f"---\nname: profile\ndescription: The user profile.\nmetadata:\n  frames-backlinks: \"{link}\"\n---\n{body}"
    s0 = SkillSet.from_files({"skills/profile/SKILL.md": text.encode()})
    keeper = PolicyKeeper.build(s0, {"policies/airline.md": policy.encode()})
    plain = _blueprint(('Add the rule: "Check the profile first."', ("c1",)))

    # "email" is still a word of the body (in the added rule), but no longer an item of its list.
    errors, _ = keeper.check(s0["profile"], body.replace("- email\n", "- Ask for the email before a change.\n"), plain)
    assert len(errors) == 1 and "'email'" in errors[0].message
    assert keeper.check(s0["profile"], body.replace("- date of birth", "* Date of birth"), plain) == ([], [])


def test_dropping_or_weakening_a_policy_sentence_is_an_error_unless_asked() -> None:
    keeper, s0 = _keeper()
    skill = s0["cancel-flight"]
    plain = _blueprint(('Add the rule: "Check the booking date first."', ("c1",)))

    dropped = BODY.replace("A booking can be cancelled within 24 hours for a full refund.\n", "")
    errors, changes = keeper.check(skill, dropped, plain)
    assert changes == [] and len(errors) == 1
    assert errors[0].message.startswith("removed the policy sentence 'A booking can be")

    weakened = BODY.replace("within 24 hours for a full refund", "within 24 hours for a partial refund")
    errors, _ = keeper.check(skill, weakened, plain)
    assert len(errors) == 1 and errors[0].kind == "policy-sentence"
    assert errors[0].message.startswith("changed the policy sentence")

    rewrapped = BODY.replace("within 24 hours for", "within 24 hours\nfor").replace("A booking", "- **A booking")
    assert keeper.check(skill, rewrapped + "- Check the booking date first.\n", plain) == ([], [])

    quoted_uncited = _blueprint(('Remove "A booking can be cancelled within 24 hours for a full refund."', ()))
    assert keeper.check(skill, dropped, quoted_uncited)[0]


def test_a_blueprint_that_quotes_the_sentence_and_cites_cases_may_remove_it() -> None:
    keeper, s0 = _keeper()
    line = 'Remove "A booking can be cancelled within 24 hours for a full refund." (the policy says 48 hours)'
    dropped = BODY.replace("A booking can be cancelled within 24 hours for a full refund.\n", "")

    errors, changes = keeper.check(s0["cancel-flight"], dropped, _blueprint((line, ("c1",))))

    assert errors == []
    assert [c.to_json() for c in changes] == [
        {
            "skill": "cancel-flight",
            "sentence": "A booking can be cancelled within 24 hours for a full refund.",
            "source": "policies/airline.md:3-7",
            "kind": "removed",
            "asked_by": line,
            "case_ids": ["c1"],
        }
    ]


class _Client:
    """A ModelClient stand-in: answers the rewriter with the scripted bodies, in turn."""

    def __init__(self, bodies: list[str]) -> None:
        self.bodies = bodies
        self.requests: list[Any] = []

    async def achat(self, request: Any) -> Any:
        from frames_cli.llm.client.client import ChatReply
        from frames_cli.llm.messages.types import Usage

        body = self.bodies[len(self.requests)]
        self.requests.append(request)
        return ChatReply(request, "{}", {"body": body}, Usage(), False, None, 1)

    def gather(self, fn: Any, items: list) -> list:
        async def run() -> list:
            return [await fn(item) for item in items]

        return asyncio.run(run())


def test_a_rewrite_that_drops_a_back_linked_sentence_is_rejected_and_retried_with_the_error() -> None:
    keeper, s0 = _keeper()
    dropped = (
        BODY.replace("Compensation is a certificate of $100 per passenger.\n", "") + "- Check the booking date first.\n"
    )
    client = _Client([dropped, BODY + "- Check the booking date first.\n"])
    blueprint = _blueprint(('Add the rule: "Check the booking date first."', ("c1",)))

    (outcome,) = rewrite(client, s0, [blueprint], {}, RewriteLimits(50, 1), round_no=1,
                         guard=RewriteGuard(keeper, _values()))

    assert outcome.accepted and outcome.attempts == 2 and outcome.policy_changes == []
    assert outcome.errors[0][0].startswith("removed the policy sentence 'Compensation is a certificate of $100 per "
                                           "passenger.'")
    retry = client.requests[1].messages[-1]["content"]
    assert "Compensation is a certificate of $100 per passenger." in retry


def test_a_rewrite_that_keeps_dropping_it_is_dropped() -> None:
    keeper, s0 = _keeper()
    dropped = BODY.replace("Compensation is a certificate of $100 per passenger.\n", "")
    blueprint = _blueprint(('Add the rule: "Check the booking date first."', ("c1",)))

    (outcome,) = rewrite(_Client([dropped, dropped]), s0, [blueprint], {}, RewriteLimits(50, 1), round_no=1,
                         guard=RewriteGuard(keeper))

    assert not outcome.accepted and len(outcome.errors) == 2


def test_an_added_line_left_as_a_stub_is_an_error() -> None:
    _, s0 = _keeper()
    guard = RewriteGuard(values=_values())
    errors, _ = guard.check(s0["cancel-flight"], BODY + "- Agent assigns payment to.\n", _blueprint(("x", ("c1",))))
    assert len(errors) == 1 and "values cut out ('to .')" in errors[0].message


def test_an_added_line_carrying_a_case_value_is_an_error() -> None:
    _, s0 = _keeper()
    guard = RewriteGuard(values=_values())
    errors, _ = guard.check(s0["cancel-flight"], BODY + "- Do not cancel EHGLP3.\n", _blueprint())
    assert len(errors) == 1 and "`EHGLP3` (from case c1)" in errors[0].message and errors[0].kind == "added-line"
    assert guard.check(s0["cancel-flight"], BODY + "- Do not cancel a flown flight.\n", _blueprint()) == ([], [])


def test_a_guard_switched_off_checks_nothing(tmp_path: Path) -> None:
    _, s0 = _keeper()
    assert RewriteGuard().check(s0["cancel-flight"], "Anything.\n", _blueprint()) == ([], [])
