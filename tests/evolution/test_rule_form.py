"""The rule-form guard: what is addressed to a grader, describes a case's user, or copies a case's
evaluator note with its values cut out is not a rule (frames_cli/ruleform.py, evolution/propose/guards.py).

Invariants:
1. A proposal whose rule sets a test of the agent ("Check that agent ...", "Test agent's capacity
   ...") or describes a case's user ("Also user is not a native speaker.") is dropped, with the
   sentence and the reason in the diagnoser result's `dropped`; a rule next to it in another
   proposal is kept.
2. A rule that copies a case's evaluator note with its values cut out ("Agent update reservation
   to economy." from "Agent update reservation OWZ4XL to economy.") is dropped, naming the case.
3. None of the real-model trial's 38 diagnoser proposals, none of the lines its rewrites added, and
   no sentence of the bundled airline policy is refused (no false drop on real rules).
4. A line a rewrite adds is refused for the same reasons; with `check_form` off, none of this is
   checked (the case-value check still is).
5. A reason names at most MAX_NAMED_VALUES values and counts the rest.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frames_cli.evolution.propose.diagnose import DiagnoserResult, Proposal
from frames_cli.evolution.propose.case_index import MAX_NAMED_VALUES, CaseValues, Hit
from frames_cli.evolution.propose.guards import added_line_errors, guard_proposals
from frames_cli.formats.case import Case
from frames_cli.formats.case_record import case_from_dict
from frames_cli.words import sentences
from frames_cli.ruleform import not_a_rule
from frames_cli.evolution.state.upgrades import legacy_proposal, legacy_rules

ROOT = Path(__file__).resolve().parents[2]
TRIAL = ROOT / "tests" / "fixtures" / "real-model-trial" / "thin-diagnoser-answers.json"
POLICY = "The user can change the cabin of a reservation. All passengers must fly in the same cabin.\n"


def _case(case_id: str, evidence: list[str]) -> Case:
    return case_from_dict({
        "id": case_id, "category": "change-cabin", "source": {"kind": "test", "ref": case_id}, "created": "2026-12-01",
        "task": {"input": {"text": "Please move my trip OWZ4XL to economy.", "fields": {"reservation_id": "OWZ4XL"}},
                 "expected": {"actions": []}, "check": {"kind": "exact"}, "answer_format": "json"},
        "diagnosis": {"evidence": evidence},
    })


CASES = [_case("c1",
               ["Agent update reservation OWZ4XL to economy.", "Test agent's capacity to handle a cabin change."])]


def _result(*changes: str) -> DiagnoserResult:
    proposals = [
        Proposal(0, i, "modify-flight", c, "why", ("c1",), rules=tuple(legacy_rules(c))) for i, c in enumerate(changes)
    ]
    return DiagnoserResult(0, ["c1"], proposals)


@pytest.mark.parametrize("rule", [
    "Check that agent downgrades all passengers to basic economy.",
    "Test agent's capacity to handle a flight change.",
    "Testing if the agent can handle user asking for 3 changes at once.",
    "Assess that agent correctly issues compensation.",
    "Test capacity of agent to reason about shortest flight option.",
    "Also user is not a native speaker.",
    "User wants to make many changes but at the end finds it all too expensive.",
    "Check that Agent verifies membership status. User thinks she is Gold.",
    "If the agent refuses to give compensation after you insisted 5 times, ask to be transferred.",
])
def test_a_proposal_addressed_to_a_grader_or_about_the_cases_user_is_dropped(rule: str) -> None:
    result = _result(f'Add the rule: "{rule}"', 'Add the rule: "All passengers must fly in the same cabin."')

    lines = guard_proposals([result], CaseValues.build(CASES, [POLICY]))

    assert [p.position for p in result.proposals] == [1]
    assert result.dropped == lines and len(lines) == 1
    assert "is not a rule:" in lines[0] and ("grader" in lines[0] or "user" in lines[0])


def test_a_rule_copying_a_cases_note_with_its_values_cut_out_is_dropped() -> None:
    result = _result('Add the rule: "Agent update reservation to economy."',
                     'Add the rule: "A cabin change applies to every passenger and every flight of the reservation."')

    lines = guard_proposals([result], CaseValues.build(CASES, [POLICY]))

    assert [p.position for p in result.proposals] == [1] and len(lines) == 1
    # Also an evaluator's assertion (a bare "Agent"), which findings names first; the copy is found too.
    copied = dict(CaseValues.build(CASES, [POLICY]).findings("Agent update reservation to economy.", "modify-flight",
                                                             ("c1",)))["copied note"]
    assert "evaluator's note on case c1" in copied and "Agent update reservation OWZ4XL to economy." in copied


def test_no_real_model_rule_and_no_policy_sentence_is_refused() -> None:
    trial = json.loads(TRIAL.read_text())
    proposals = [legacy_proposal(p) for r in trial["rounds"] for d in r["diagnosers"] for p in d["proposals"]]
    assert len(proposals) == 38
    from frames_cli.formats.case_files import load_cases

    # Each proposal as it was made: for its skill, citing its cases, which the index holds.
    result = DiagnoserResult(0, ["c1"], [
        Proposal(0, i, p["skill"], p["change"], p["rationale"], tuple(p["case_ids"]), rules=tuple(p["rules"]))
        for i, p in enumerate(proposals)
    ])
    cases = load_cases([ROOT / "cases" / "tau2-airline.yaml", ROOT / "holdout" / "tau2-airline-test.yaml"])
    bundled = CaseValues.build(cases, [(ROOT / "policies" / "airline.md").read_text()], check_values=False)
    assert guard_proposals([result], bundled) == []
    policy = (ROOT / "policies" / "airline.md").read_text()
    assert [s for s in sentences(policy) if not_a_rule(s)] == []
    # "Check eligibility ..." checks a reservation, not the agent: a rule the trial's model wrote.
    assert not_a_rule("Check eligibility separately for each reservation from its record.") is None


def test_no_real_model_proposal_is_dropped_against_the_bundled_cases() -> None:
    # Every guard on, indexed over the 50 bundled τ² cases the trial's proposals were made from.
    from frames_cli.formats.case_files import load_cases

    cases = load_cases([ROOT / "cases" / "tau2-airline.yaml", ROOT / "holdout" / "tau2-airline-test.yaml"])
    values = CaseValues.build(cases, [(ROOT / "policies" / "airline.md").read_text()])
    trial = json.loads(TRIAL.read_text())
    proposals = [p for r in trial["rounds"] for d in r["diagnosers"] for p in d["proposals"]]
    found = [(p["change"][:60], values.why_not(p["change"], p["skill"], p["case_ids"])) for p in proposals]
    assert [f for f in found if f[1]] == []


def test_the_trial_rewrites_added_lines_pass() -> None:
    # The rewritten skill bodies of the thin-skill trial (airline-thin-r*c1.diff), as far as the
    # fixture carries their rules: every rule becomes a line of that form.
    trial = json.loads(TRIAL.read_text())
    quoted = [
        q for r in trial["rounds"] for d in r["diagnosers"] for p in d["proposals"] for q in legacy_proposal(p)["rules"]
    ]
    values = CaseValues.build(CASES, [POLICY], check_values=False)
    assert [e for q in quoted for e in added_line_errors(None, f"- {q}\n", values, "skills/x/SKILL.md")] == []


def test_an_added_line_is_refused_for_the_same_reasons_unless_the_check_is_off() -> None:
    body = ("## Modify flight\n\n- Check that agent refunds to original payment method.\n"
            "- Agent update reservation to economy.\n")
    on = added_line_errors(None, body, CaseValues.build(CASES, [POLICY]), "skills/x/SKILL.md")
    assert len(on) == 2 and all("is not a rule" in e.message for e in on)
    assert [(e.kind, e.line) for e in on] == [("added-line", 3), ("added-line", 4)]
    assert added_line_errors(None, body, CaseValues.build(CASES, [POLICY], check_form=False),
                             "skills/x/SKILL.md") == []
    off = CaseValues.build(CASES, [POLICY], check_form=False)
    # the case-value check still runs
    assert len(added_line_errors(None, "- Do not move OWZ4XL.\n", off, "skills/x/SKILL.md")) == 1


def test_a_reason_names_a_few_values_and_counts_the_rest() -> None:
    values = CaseValues.build(CASES, [POLICY])
    hits = [Hit(f"ID{n:04d}X", ("c1",)) for n in range(MAX_NAMED_VALUES + 3)]
    reason = values.reason(hits)
    assert reason.count("`ID") == MAX_NAMED_VALUES and "and 3 more values" in reason
    assert reason.startswith(f"carries {MAX_NAMED_VALUES + 3} case values")
