"""One case's facts are not rules: the `case fact` guard (frames_cli/ruleform.py `case_fact`,
evolution/propose/case_index.py), docs/decisions/0096-case-facts-are-not-rules.md.

Invariants:
1. A proposed rule that says what the agent finds out about one case ("The agent identifies that
   user is not a Gold member but a Regular member.", the bundled runs' lines) or what one user,
   flight or reservation is or was, under no condition, is dropped with the `case fact` reason; a
   rule beside it in another proposal is kept.
2. The same facts under a condition pass ("If the user is a Silver member, ...", "When the agent
   finds that ..."), as do a test of them ("Verify that the flight was delayed ..."), a rule that
   restates a rule ("... understand that basic economy flights cannot be modified"), a present
   passive ("The user is charged ..."), the items after a lead-in ending in a colon and conditions
   joined by semicolons.
3. No good line of the guards corpus, no rule the recorded real-model runs' diagnosers wrote and no
   paragraph or list item of the bundled policy and skills is refused as a case fact, except a
   policy list item read alone ("The booking was made within the last 24 hrs", its condition on the
   line before), which a rewrite may add: added lines are not held to this check.
"""

from __future__ import annotations

import json
import lzma
import re
from pathlib import Path

import pytest

from frames_cli.evolution.propose.case_index import CaseValues
from frames_cli.evolution.propose.diagnose import DiagnoserResult, Proposal
from frames_cli.evolution.propose.guards import added_line_errors, guard_proposals
from frames_cli.ruleform import case_fact

ROOT = Path(__file__).resolve().parents[2]
POLICY = "Gold and Silver members get a certificate when a flight is delayed. The user can cancel a flight.\n"

FACTS = [
    "The agent identifies that user is not a Gold member but a Regular member.",
    "The agent should realize that flight was not cancel and not in business class.",
    "The agent detects that user is actually a Silver member.",
    "Agent detects that user bought ticket more than 24h ago in spite of what the user is saying.",
    "Realize that the number of passengers on the delayed flight is incorrect.",
    "The user is a Gold member.",
    "The flight was not cancelled by the airline.",
    "Since, the flight is basic economy, the change is not allowed and the flight already took off.",
    "Do not cancel the reservation as the user is healthy.",
]

RULES = [
    "If the user is a Silver member, offer a certificate for a delayed flight only when the user asks.",
    "When the agent finds that the reservation was booked more than 24 hours ago, deny the cancellation.",
    "Verify that the flight was delayed before offering compensation.",
    "The agent must understand that basic economy flights cannot be modified.",
    "The user is charged the fare difference for a cabin upgrade.",
    "Refund to the card that the user was charged on.",
    "Determine whether the user is a Gold member from the profile, not from what the user says.",
    "A flight can be cancelled if any of these holds: the booking was made within 24 hours; the flight was cancelled.",
    "Cancel only when one of these holds:\n- The booking was made within the last 24 hrs.\n- The flight was cancelled.",
]


def _blocks(text: str) -> list[str]:
    """A Markdown text's paragraphs (hard-wrapped lines joined) and list items, one string each."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or re.match(r"\s*(?:[-*+]|\d+[.)])\s", line):
            blocks.append([])
        if line.strip() and not line.lstrip().startswith("#"):
            blocks[-1].append(line.strip())
    return [" ".join(b) for b in blocks if b]


def _result(*rules: str) -> DiagnoserResult:
    proposals = [
        Proposal(0, i, "cancel-flight", f'Add the rule: "{r}"', "why", ("c1",), rules=(r,)) for i, r in enumerate(rules)
    ]
    return DiagnoserResult(0, ["c1"], proposals)


@pytest.mark.parametrize("fact", FACTS)
def test_a_case_fact_is_found(fact: str) -> None:
    found = case_fact(fact)
    assert found is not None and found[0] == fact


@pytest.mark.parametrize("rule", RULES)
def test_a_rule_that_puts_the_fact_under_a_condition_passes(rule: str) -> None:
    assert case_fact(rule) is None


@pytest.mark.parametrize("fact", FACTS[:3])
def test_a_proposal_stating_a_case_fact_is_dropped_and_the_rule_beside_it_kept(fact: str) -> None:
    result = _result(fact, "If the user is a Silver member, the agent can offer a certificate for a delayed flight.")

    lines = guard_proposals([result], CaseValues.build([], [POLICY]))

    assert [p.position for p in result.proposals] == [1] and result.dropped == lines and len(lines) == 1
    assert f"is not a rule: {fact!r}" in lines[0] and "a rule puts such a fact under a condition" in lines[0]
    found = dict(CaseValues.build([], [POLICY]).findings(fact, "cancel-flight", (), [fact]))
    assert "case fact" in found
    # An added line is not held to it: it may be an item under a lead-in on another line.
    assert added_line_errors(None, f"- {fact}\n", CaseValues.build([], [POLICY]), "skills/x/SKILL.md") == []


def test_the_corpus_lines_of_the_bundled_runs_are_junk_of_the_tune_part() -> None:
    records = [json.loads(line) for line in (ROOT / "bench/data/guards/corpus.jsonl").read_text().splitlines()]
    added = {r["text"]: r for r in records if r["text"] in FACTS[:3]}
    assert set(added) == set(FACTS[:3])
    assert {(r["part"], r["label"]) for r in added.values()} == {("tune", "junk")}
    assert [r["text"] for r in records if r["label"] == "good" and case_fact(r["text"])] == []


def test_no_real_rule_policy_paragraph_or_skill_line_is_a_case_fact() -> None:
    rules = []
    for path in sorted((ROOT / "bench/data/real-model-runs").glob("*/exchanges.jsonl.xz")):
        for raw in lzma.open(path, "rt", encoding="utf-8"):
            record = json.loads(raw)
            if record.get("role") == "diagnoser" and isinstance(record.get("reply"), str) and "{" in record["reply"]:
                reply = record["reply"]
                answer = json.loads(reply[reply.index("{") : reply.rindex("}") + 1])
                rules += [r for p in answer.get("proposals", []) for r in p.get("rules") or [p["change"]]]
    assert len(rules) >= 40
    assert [r for r in rules if case_fact(r)] == []
    texts = [*(ROOT / "policies").glob("*.md"), *(ROOT / "skills").glob("*/SKILL.md")]
    found = {b for path in texts for b in _blocks(path.read_text()) if case_fact(b)}
    assert found == {"- The booking was made within the last 24 hrs"}
