"""A strong simulated model reads the policy: a case is decided by a policy passage that other cases share.

Invariants:
1. A case's deciding passage is the policy section (split at headings) its evidence matches best.
2. With `policy_reading` > 0 the executor knows a case to the share of the passage's statements
   it turns on (those its evidence touches) that its loaded skills hold; a one-line skill that only names the
   procedure holds none of them, and a
   weak model (`policy_reading` 0) gets nothing from prose at all.
3. Putting a passage's statements back helps every case that turns on it, including one no
   diagnoser saw: learning through the policy transfers.
4. A diagnoser that finds a failure's cause proposes the deciding passage's statements that the
   retrieved policy shows and no skill states, and only those, for the skill the passage's
   heading names.
"""

from __future__ import annotations

import json

from frames_cli.formats.case_record import case_from_dict
from frames_cli.llm.messages.conventions import RETRIEVED_CLOSE, RETRIEVED_OPEN
from frames_cli.sim import diagnoser
from frames_cli.sim.base import SimCall
from frames_cli.sim.matching import knowledge
from frames_cli.sim.world import SimWorld, needed, passages_of
from frames_cli.workspace.config import SimulatorConfig

CANCEL = [
    "The agent must obtain the user id and the reservation id before cancelling.",
    "A reservation can be cancelled only when the booking was made within the last 24 hours.",
    "Business class flights can be cancelled at any time.",
]
BAGGAGE = ["Gold members get four free checked bags per passenger.",
           "Regular members pay fifty dollars for each checked bag."]
POLICY = (
    "# Airline policy\n\n## Cancel flight\n\n" + "\n".join(CANCEL) + "\n\n## Baggage\n\n" + "\n".join(BAGGAGE) + "\n"
)


def _case(case_id: str, reservation: str, evidence: str) -> object:
    return case_from_dict(
        {
            "id": case_id,
            "category": "cancel",
            "source": {"kind": "test", "ref": case_id},
            "created": "2026-12-01",
            "task": {"input": {"text": f"Please cancel {reservation}."}, "expected": {"actions": []},
                     "check": {"kind": "exact"}, "answer_format": "json"},
            "diagnosis": {"evidence": [f"Agent does not cancel {reservation}.", evidence]},
        }
    )


SEEN = _case("seen", "H8Q05L", "The booking was made more than 24 hours ago, so the cancellation is refused.")
UNSEEN = _case("unseen", "ZZ9ABC", "Agent refuses the cancellation: the reservation was booked two days ago.")
WORLD = SimWorld.from_cases([SEEN, UNSEEN], [POLICY])


def known(case, text: str, policy_reading: float = 1.0) -> float:
    facts = WORLD.facts(case)
    return knowledge(case.diagnosis.evidence, facts.rules, facts.values, WORLD.policy, [text], policy_reading,
                     facts.statements)


def test_passages_are_the_sections_statements_without_headings() -> None:
    assert passages_of(POLICY) == [tuple(CANCEL), tuple(BAGGAGE)]


def test_a_case_turns_on_the_statements_of_its_section_that_its_evidence_touches() -> None:
    # Section: Cancel (not Baggage); statements: those sharing NEEDED_WORDS words with the evidence.
    assert WORLD.facts(SEEN).statements == (CANCEL[1],)
    assert WORLD.facts(UNSEEN).statements == (CANCEL[0], CANCEL[1])
    assert needed(tuple(CANCEL), "Nothing in common here.") == tuple(CANCEL)  # none touched: the whole section


def test_a_strong_model_knows_a_case_from_its_passage_a_weak_one_does_not() -> None:
    verbatim = "\n".join(CANCEL)
    assert known(SEEN, verbatim) == 1.0
    assert known(SEEN, verbatim, policy_reading=0.0) == 0.0
    assert known(SEEN, "Help the user cancel a reservation.") == 0.0
    assert known(SEEN, "\n".join(BAGGAGE)) == 0.0
    assert known(SEEN, CANCEL[1]) == 1.0
    assert known(SEEN, CANCEL[2]) == 0.0  # a statement of its section it does not turn on


def test_putting_the_passage_back_helps_a_case_no_diagnoser_saw() -> None:
    thin = "Help the user cancel a reservation."
    restored = thin + "\n" + f"- {CANCEL[1]}"  # what a diagnoser of SEEN puts back
    assert known(UNSEEN, thin) == 0.0
    assert known(UNSEEN, restored) == 1 / 2


def _diagnoser_prompt(skill_body: str, retrieved: str, heading: str = "Airline policy > Cancel flight") -> str:
    skills = (
        f'<skill name="refund-and-cancel" description="Cancelling a reservation: when a booking may be refunded.">\n'
        f'{skill_body}\n</skill>\n\n'
        '<skill name="baggage" description="Checked bags and their fees.">\n' + "\n".join(BAGGAGE) + "\n</skill>\n\n"
        '<skill name="cancel-flight" description="Cancel flight: help a user.">\nHelp the user.\n</skill>'
    )
    failures = [{"case_id": "seen", "category": "cancel", "input": {"text": "Please cancel H8Q05L."},
                 "diagnosis": {"evidence": list(SEEN.diagnosis.evidence)}}]
    block = (f'{RETRIEVED_OPEN}\nRelevant policy and past changes:\n\n<policy file="airline.md" lines="3-6" '
             f'heading="{heading}">\n{retrieved}\n</policy>\n{RETRIEVED_CLOSE}\n\n')
    return f"Skills:\n\n{skills}\n\n{block}Failures:\n```json\n{json.dumps(failures)}\n```\n"


def _proposed(prompt: str) -> list[tuple[str, str]]:
    reply = diagnoser.behave(SimCall("diagnoser", prompt, 0, SimulatorConfig(p_insight=1.0), WORLD))
    return [(p["skill"], p["change"]) for p in reply["proposals"]]


def test_a_diagnoser_puts_back_the_statements_the_retrieved_policy_shows_and_no_skill_states() -> None:
    shown = "\n".join(CANCEL)
    rules = " ".join(map(diagnoser.quote_rule, WORLD.facts(SEEN).rules))  # the case's own rule, as without a policy
    thin = "Cancel a reservation when asked."
    # The case's rule goes to the skill that matches the case; the statement it turns on (not the
    # whole section) to the skill the passage's heading names.
    assert _proposed(_diagnoser_prompt(thin, shown)) == [("refund-and-cancel", rules),
                                                         ("cancel-flight", diagnoser.quote_rule(CANCEL[1]))]
    # Stated already (in any skill), or not shown to it: nothing to put back.
    assert _proposed(_diagnoser_prompt(thin + "\n" + "\n".join(CANCEL), shown)) == [("refund-and-cancel", rules)]
    assert _proposed(_diagnoser_prompt(thin, "Business flights are nice.")) == [("refund-and-cancel", rules)]


def test_a_sentence_that_only_resembles_a_statement_is_not_put_back() -> None:
    # Another section's sentence sharing most of a Cancel statement's words is that section's rule.
    rules = " ".join(map(diagnoser.quote_rule, WORLD.facts(SEEN).rules))
    lookalike = "A reservation can be cancelled only when the booking was made within the last 24 hours or by phone."
    assert _proposed(_diagnoser_prompt("Cancel a reservation when asked.", lookalike, "Airline policy > Baggage")) == [
        ("refund-and-cancel", rules)
    ]


def test_statements_whose_heading_names_no_one_skill_go_to_the_case_s_skill() -> None:
    rules = WORLD.facts(SEEN).rules
    proposals = _proposed(_diagnoser_prompt("Cancel a reservation when asked.", CANCEL[1], "Airline policy"))
    assert proposals == [("refund-and-cancel", " ".join(map(diagnoser.quote_rule, rules))),
                         ("refund-and-cancel", diagnoser.quote_rule(CANCEL[1]))]


def test_passages_are_read_as_the_policy_parser_reads_markdown() -> None:
    # Setext headings split; a `#` line inside fenced code does not; front matter is not a statement.
    text = (
        "---\ntitle: Airline policy for every agent\nlayout: default page\n---\n\n"
        "Cancel flight\n=============\n\n"
        + CANCEL[0]
        + "\n\n```\n# the agent must not split here at all\n```\n"
        + CANCEL[1]
        + "\n\n"
        "Baggage\n-------\n\n" + BAGGAGE[0] + "\n"
    )
    assert passages_of(text) == [(CANCEL[0], "the agent must not split here at all", CANCEL[1]), (BAGGAGE[0],)]
