"""The simulator's literal knowledge of a case: answers equal the definition, asked in any order.

Invariants:
1. For a case without rules, `knowledge` is the share of its evidence sentences that
   `sentence_found` finds among the sentence token sets of all texts together, whatever was asked
   before (the per-text cache changes nothing).
2. An evidence sentence without content words counts as found, even when there is no text at all.
"""

from __future__ import annotations

import itertools
import random

from frames_cli.words import sentences, tokens
from frames_cli.sim.matching import knowledge, sentence_found, sentence_sets


def coverage(evidence: list[str], texts: list[str]) -> float:
    """`knowledge` of a case with no rules and no values: its literal part alone."""
    return knowledge(evidence, (), frozenset(), frozenset(), texts, 0.0)

SKILLS = [
    "# Bags\n\n- Silver members get 2 free checked bags per passenger in economy.\n"
    "- Each bag must weigh at most 23 kg.",
    "Basic economy reservations can be cancelled only within 24 hours of booking. Refunds go to the original card.",
    "- Offer compensation for delays only when the delay is longer than three hours.\n- Apologise for delays.",
    "",
]
EVIDENCE = [
    "Silver members get 2 free checked bags per passenger in economy.",
    "Silver members get two free checked bags in economy.",  # a rewording: 5 of 6 content words
    "Gold members get 3 free checked bags per passenger in business.",  # same topic, another rule
    "Basic economy reservations can be cancelled only within 24 hours of booking.",
    "Offer compensation for delays only when the delay is longer than three hours.",
    "Never waive fees for staff.",
    "It is what it is.",  # no content words
]


def by_definition(evidence: list[str], texts: list[str]) -> float:
    """Invariant 1 written out without any memory: every sentence set of every text, compared afresh."""
    if not evidence:
        return 1.0
    sets = [frozenset(tokens(s)) for text in texts for s in sentences(text)]
    return sum(sentence_found(e, sets) for e in evidence) / len(evidence)


def test_coverage_equals_its_definition_in_any_order_of_questions():
    rng = random.Random(5)
    questions = [
        (rng.sample(EVIDENCE, rng.randint(0, 4)), rng.sample(SKILLS, rng.randint(0, 3)))
        for _ in range(300)
    ]
    answers = [coverage(e, t) for e, t in questions]
    rng.shuffle(questions)
    for evidence, texts in questions:
        assert coverage(evidence, texts) == by_definition(evidence, texts)
    assert 0.0 < sum(answers) / len(answers) < 1.0  # the questions mix found and missing evidence


def test_found_evidence_per_text():
    assert coverage(EVIDENCE[:2], SKILLS[:1]) == 1.0  # verbatim and reworded
    assert coverage(EVIDENCE[2:3], SKILLS[:1]) == 0.0  # another rule on the same topic
    assert coverage(EVIDENCE[3:6], SKILLS) == 2 / 3
    for pair in itertools.permutations(SKILLS[:3], 2):
        assert coverage(EVIDENCE[3:5], list(pair)) == (1.0 if SKILLS[0] not in pair else 0.5)


def test_evidence_without_content_words_is_found_even_in_no_text():
    assert coverage([EVIDENCE[-1]], []) == 1.0
    assert coverage([EVIDENCE[-1], EVIDENCE[0]], []) == 0.5
    assert coverage([], []) == 1.0


def test_sentence_sets_are_the_token_sets_of_the_sentences():
    assert sentence_sets(SKILLS[0]) == tuple(frozenset(tokens(s)) for s in sentences(SKILLS[0]))
    assert sentence_sets("") == ()
