"""One rule, one line: when two rule texts state the same rule, contradict each other, or differ.

Invariants:
1. Paraphrases of one rule by different diagnosers are one group; one diagnoser's two changes never are.
2. Wordings that differ in a number, or a rule and its refusal, are a contradiction, not one rule.
3. Texts naming different case codes (reservation ids) are never one rule.
4. A body that states a rule twice has a duplicate pair; a policy table whose rows differ in a number has none.
"""

from __future__ import annotations

from frames_cli.evolution.propose import rules
from frames_cli.evolution.propose.diagnose import Proposal
from frames_cli.evolution.state.upgrades import legacy_proposal, legacy_rules

ELIGIBLE_A = ("Cancel a reservation only if it was booked within the last 24 hours, the airline cancelled the flight, "
              "it is in business class, or it has travel insurance.")
ELIGIBLE_B = ("A reservation can be cancelled only if it was booked within the last 24 hours, the airline cancelled "
              "the flight, the cabin is business, or it has travel insurance.")
DEPARTED = "A reservation with a flight that has already departed (status flying or landed) cannot be cancelled."


def test_paraphrases_from_different_diagnosers_are_one_group():
    assert rules.group([ELIGIBLE_A, ELIGIBLE_B, DEPARTED], [0, 1, 1], 0.25) == [[0, 1], [2]]


def test_one_diagnosers_two_changes_are_never_merged():
    assert rules.group([ELIGIBLE_A, ELIGIBLE_B], [0, 0], 0.25) == [[0], [1]]


def test_identical_wording_is_merged_whoever_proposed_it():
    assert rules.group([DEPARTED, " " + DEPARTED], [0, 0], 0.99) == [[0, 1]]


def test_different_reservation_codes_are_different_rules():
    a, b = "Agent should not cancel reservation PEP4E0 today.", "Agent should not cancel reservation IFOYYZ today."
    assert rules.similarity(a, b) > 0.5
    assert rules.group([a, b], [0, 1], 0.25) == [[0], [1]]
    assert not rules.same_rule(a, b, 0.1)


def test_numbers_and_polarity_make_a_contradiction():
    three = ("Each reservation may be paid with at most one certificate, one credit card and three gift cards from the "
             "profile.")
    two = (
        "Each reservation may be paid with at most one certificate, one credit card and 2 gift cards from the profile."
    )
    assert rules.contradiction(three, two).startswith("different numbers")
    transfer = "Transfer the user to a human agent when they ask to remove travel insurance from a reservation."
    refuse = "Do not transfer the user to a human agent when they ask to remove travel insurance from a reservation."
    assert rules.contradiction(transfer, refuse) == "one forbids what the other asks"
    assert rules.contradiction(ELIGIBLE_A, ELIGIBLE_B) is None
    # Loosely alike wordings that differ in negation words are not judged against each other.
    assert rules.contradiction(ELIGIBLE_A, DEPARTED) is None


def test_more_detail_is_not_a_number_conflict():
    assert not rules.numbers_conflict("Cancel within 24 hours of booking.",
                                      "Cancel within 24 hours of booking, 3 passengers at most.")
    assert rules.numbers("three bags, 24 hours, $75, reservation PEP4E0") == {"3", "24", "75"}


def test_duplicate_pairs_find_a_rule_stated_twice_but_not_a_fee_table():
    body = f"# Cancel flight\n\n- {ELIGIBLE_A}\n- {DEPARTED}\n- {ELIGIBLE_B}\n"
    [pair] = rules.duplicate_pairs(body, 0.4)
    assert (pair.first_line, pair.second_line) == (3, 5)
    table = "\n".join(f"- {n} free checked bags for each business passenger with a gold membership" for n in (2, 3, 4))
    assert rules.duplicate_pairs(table, 0.4) == []


def test_a_proposals_rule_text_is_its_rules_else_its_whole_change():
    added = Proposal(0, 0, "s", "Add a rule on flown flights.", "", ("c1",), rules=("Never cancel a flown flight.",))
    assert added.rule_text == "Never cancel a flown flight."
    # No regex over the words: an empty `rules` reads the whole change (docs/decisions/0095-rules-as-data.md).
    assert Proposal(0, 0, "s", 'Add the rule: "x y."', "", ("c1",)).rule_text == 'Add the rule: "x y."'
    removal = Proposal(0, 0, "s", " Remove the paragraph on pets. ", "", ("c1",))
    assert removal.rule_text == "Remove the paragraph on pets."


def test_old_changes_are_read_once_by_the_named_legacy_reader():
    assert legacy_rules('Add the rule: "Never cancel a flown flight."') == ["Never cancel a flown flight."]
    # the simulator's several rules in a row, a real model's rule holding a quote, a rewording, a removal
    assert legacy_rules('Add the rule: "A." Add the rule: "B."') == ["A.", "B."]
    assert legacy_rules('Add the rule: "Say "no" to it."') == ['Say "no" to it.']
    assert legacy_rules('Replace "Old rule." with "New rule."') == ["New rule."]
    assert legacy_rules('Remove "Old rule."') == []
    assert legacy_proposal({"change": 'Add the rule: "A."'})["rules"] == ["A."]
    assert legacy_proposal({"change": "x", "conflict": "one forbids what the other asks"})["rules"] == []
    assert legacy_proposal({"change": "x", "rules": ["kept"]})["rules"] == ["kept"]


def test_a_rule_stated_three_times_gives_two_repeats_each_with_its_first_statement():
    body = f"- {ELIGIBLE_A}\n- {DEPARTED}\n- {ELIGIBLE_B}\n- {ELIGIBLE_A}\n"
    assert [(d.first_line, d.second_line) for d in rules.duplicate_pairs(body, 0.4)] == [(1, 3), (1, 4)]
    assert len(rules.duplicate_pairs(body, 0.4, limit=1)) == 1


def test_the_duplicate_check_is_near_linear_on_a_hostile_body(monkeypatch):
    """Issue 29: every pair of sentences was compared (regexes per pair): a 1,000-line rewrite
    cost 32 s, 4,000 lines over 300 s, and Ctrl-C waited for it. Each sentence is now read once
    and compared only with a bounded number of earlier sentences sharing its rarest words."""
    read, compared = [0], [0]
    real_tokens, real_same = rules.token_set, rules.RuleFeatures.same_rule

    def counting_tokens(text):
        read[0] += 1
        return real_tokens(text)

    def counting_same(self, other, threshold):
        compared[0] += 1
        return real_same(self, other, threshold)

    monkeypatch.setattr(rules, "token_set", counting_tokens)
    monkeypatch.setattr(rules.RuleFeatures, "same_rule", counting_same)
    n = 3000
    table = "\n".join(f"- {i} free checked bags for each business passenger with a gold membership" for i in range(n))
    codes = "\n".join(f"- The agent must not cancel reservation R{i:05d}X for the passenger in economy today."
                      for i in range(n))
    same = "\n".join(f"- {DEPARTED}" for _ in range(n))
    assert rules.duplicate_pairs(table, 0.4) == [] and rules.duplicate_pairs(codes, 0.4) == []
    assert len(rules.duplicate_pairs(same, 0.4)) == n - 1
    assert read[0] == 3 * n
    assert compared[0] <= n + n * rules.MAX_CANDIDATES + n  # table: none compared; codes: the bound; same: one each
