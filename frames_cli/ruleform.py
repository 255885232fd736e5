"""Sentences that are not rules for the agent: notes to a grader, a case's scenario, one case's facts.

A benchmark's evaluator text says what a task tests and who its user is. τ²-bench's
`description.purpose`, which frames shows diagnosers as evidence, reads "Test that agent refuses to
do a change ...", "Check that agent downgrades all passengers ...", "User wants change flight
dates.", "Also user is not a native speaker.". Copied into a skill, such a line tells the agent
nothing it can follow: it addresses someone who grades the agent, or it describes one case. The
proposal guard (evolution/propose/guards.py) drops it, and the simulator's world (sim/world.py) does not
count it as a rule a case needs, so that both agree on what a rule is. Shared here so that neither
package imports the other, as `casevalues` is. See docs/decisions/0055-rules-addressed-to-a-grader.md (rules addressed
to a grader).

What the real-model trial's diagnosers wrote (tests/fixtures/real-model-trial/) shows what must
pass: rules in the imperative or in general terms, some starting with "Check" ("Check eligibility
separately for each reservation from its record ..."), none naming the agent in the third person
as the object of a test.
"""

from __future__ import annotations

import re

from frames_cli.words import sentences

# A sentence that sets a test of the agent: one that opens with "Test"/"Testing" ("Test that agent
# refuses ...", "Testing introducing a new user intent ...", "Test for flight change."), or with
# check/assess/verify/evaluate/make sure whose object is the agent ("Check that agent ...",
# "Assess whether the agent ..."), or that names a test of the agent's understanding anywhere
# ("Complex transaction testing understanding of ..."). "Check eligibility ..." (a rule the
# real-model trial wrote) checks a reservation, not the agent: it passes.
_GRADER = re.compile(
    r"^(?:also,?\s+)?(?:"
    r"test(?:s|ing)?\b"
    r"|(?:check(?:s|ing)?|assess(?:es|ing)?|verif(?:y|ies|ying)|evaluat(?:e|es|ing)|make\s+sure|see)\s+"
    r"(?:that\s+|if\s+|whether\s+|how\s+)?(?:the\s+)?agent\b"
    r"|instructions\s+should"
    r")\b",
    re.IGNORECASE,
)
_GRADER_ANYWHERE = re.compile(
    r"\btest(?:s|ing)\s+(?:of\s+)?(?:the\s+)?(?:agent|understanding|capacity|ability)\b|"
    r"\bwe\s+expect\s+(?:the\s+)?agent\b",
    re.IGNORECASE,
)
# A sentence to the simulated user: it names the agent in the third person and speaks to "you"
# ("If the agent refuses to give compensation after you insisted 5 times, ask to be transferred").
# A rule for the agent says "you" to the agent, never "the agent" beside it.
_TO_USER = re.compile(r"(?=.*\bthe\s+agent\b)(?=.*\byou\b)", re.IGNORECASE)
# A sentence about the case's user: τ²'s scenario notes open with a bare "User" and a verb ("User
# wants ...", "User has 7 reservations.", "Also user is not a native speaker."), where a rule or the
# policy writes "The user must ...", "If the user ...", "Users ...", "User id". A gendered pronoun
# names one person ("User thinks she is Gold"): no rule of the policy or the trial uses one.
_SCENARIO = re.compile(
    r"^(?:(?:also|then),?\s+)?user\s+(?:will|would|wants|wanted|tries|tried|thinks|thought|is|was|has|had|asks|asked|"
    r"says|said|claims|claimed|mentions|insists|lies|needs|does|did|first|then|later|eventually|initially)\b",
    re.IGNORECASE,
)
_PERSON = re.compile(r"\b(?:she|he|her|hers|him|his|herself|himself)\b", re.IGNORECASE)


def not_a_rule(sentence: str) -> str | None:
    """Why one sentence is not a rule for the agent, or None when it may be one.

    "addressed to a grader": it sets a test of the agent ("Check that agent refunds ...").
    "describes a case's user": a scenario note ("User wants ...", "Also user is not a native
    speaker.") or a sentence about one person ("she", "his"). "addressed to the simulated user": it
    says "you" beside "the agent" (an instruction to the benchmark's user simulator).
    """
    text = re.sub(r"^[\s\"'(*-]+", "", sentence)
    if _GRADER.match(text) or _GRADER_ANYWHERE.search(text):
        return "is addressed to a grader (it sets a test of the agent), not to the agent"
    if _SCENARIO.match(text) or _PERSON.search(text):
        return "describes a case's user or scenario, not what the agent must do"
    if _TO_USER.match(text):
        return "is addressed to the simulated user (it says \"you\" beside \"the agent\"), not to the agent"
    return None


# An obligation or a prohibition: what makes a sentence of an evaluator's note a rule after all
# ("Flights that have already departed cannot be cancelled.", "All passengers must fly in the same
# cabin."), where the note's other sentences describe the case ("Only 2 have only 1 passenger.").
_OBLIGATION = re.compile(
    r"\b(?:must|mustn't|cannot|can't|can\s+not|may\s+not|should\s+not|shouldn't|never|always|(?:not\s+)?allowed|"
    r"(?:not\s+)?permitted|required|forbidden|prohibited)\b",
    re.IGNORECASE,
)


def note_sentences(item: str) -> tuple[list[str], list[str]]:
    """(rule sentences, other sentences) of one evidence item, as the guard and the simulator read it.

    An item that opens with a sentence `not_a_rule` refuses is an evaluator's note (τ²'s
    `description.purpose`: "Check that Agent does not cancel NQNU5R. Flights that have already
    departed cannot be cancelled."): of its sentences, only those that state an obligation or a
    prohibition are rules. In any other item every sentence that `not_a_rule` lets pass is one.
    """
    parts = sentences(item)
    note = bool(parts) and not_a_rule(parts[0]) is not None
    rules: list[str] = []
    other: list[str] = []
    for sentence in parts:
        ok = not_a_rule(sentence) is None and (not note or _OBLIGATION.search(sentence) is not None)
        (rules if ok else other).append(sentence)
    return rules, other


def first_non_rule(text: str) -> tuple[str, str] | None:
    """(sentence, reason) for the first sentence of `text` that `not_a_rule` refuses, or None."""
    for sentence in sentences(text):
        why = not_a_rule(sentence)
        if why is not None:
            return sentence, why
    return None


# An evaluator's assertion about one case: τ²'s `nl_assertions` name the agent as a bare "Agent"
# ("Agent should not make any changes.", "Agent checks all reservations."), the grader's shorthand
# for what the agent did or should do in that case, as "User wants ..." is for its user. A rule for
# the agent speaks to it or says "the agent" ("the agent must deny ..."): no rule of the policy or
# of the real-model trials opens with a bare "Agent".
_EVALUATOR = re.compile(r"^(?:(?i:also|then|for\s+this\s+\w+),?\s+)?Agent\s+(?:[a-z]|\w+n't\b)")


def evaluator_assertion(text: str) -> str | None:
    """The first sentence of `text` in an evaluator's words about one case (a bare "Agent" as its
    subject: "Agent should not make any changes."), or None.

    The proposal guard drops such a line; the simulator's world still reads these sentences as the
    rules its cases turn on (its stand-in for a policy rule), and its diagnoser states them about
    "the agent" (sim/diagnoser.py), as a real diagnoser writes."""
    return next((s for s in sentences(text) if _EVALUATOR.match(re.sub(r"^[\s\"'(*-]+", "", s))), None)


# A statement of one case's facts: what one user, flight or reservation is or was, in the grader's
# words ("Agent identifies that user is not a Gold member but a Regular member.", "Agent should
# realize that flight was not cancel and not in business class."). τ²'s `nl_assertions` state them
# as what the agent finds out, and the simulator's diagnoser writes them about "the agent"
# (sim/diagnoser.py), so `evaluator_assertion` no longer sees them. A rule puts such a fact under a
# condition ("If the user is a Silver member, ..."); one that states it outright says what held in
# one case. docs/decisions/0096-case-facts-are-not-rules.md.
_CASE_NOUN = r"(?:user|customer|client|traveler|traveller|passenger|flight|reservation|booking|ticket|trip|order)"
# A condition, or the lead-in of a test ("verify that the flight was delayed" asks whether it was):
# a fact under one is what the rule turns on, not a fact of a case.
_CONDITION = re.compile(
    r"\b(?:if|when|whenever|unless|once|after|before|until|while|whether|where|otherwise|in\s+case|provided|"
    r"as\s+long\s+as|(?:check|verif[yi]|confirm|ensur|make\s+sure)\w*\s+that)\b",
    re.IGNORECASE,
)
# Verbs whose "that" clause is presupposed true (factive): "identifies that user is ..." asserts that
# the user is. The test verbs (check, verify, confirm) are not among them: their clause is asked.
_FINDS = (
    r"(?:identif(?:y|ies|ied|ying)|reali[sz](?:e|es|ed|ing)|detect(?:s|ed|ing)?|determin(?:e|es|ed|ing)|"
    r"notic(?:e|es|ed|ing)|recogni[sz](?:e|es|ed|ing)|discover(?:s|ed|ing)?|spot(?:s|ted|ting)?|"
    r"conclud(?:e|es|ed|ing)|know(?:s|ing)?|knew|learn(?:s|ed|t|ing)?|understand(?:s|ing)?|understood|"
    r"find(?:s|ing)?(?:\s+out)?|found(?:\s+out)?|(?:figur|work)\w*\s+out|(?:is|be|are)\s+aware)"
)
# ... and whose clause is about one of the case's things ("user is actually a Silver member", "the
# number of passengers ... is incorrect"), stated without a modal: "understands that basic economy
# flights cannot be modified" restates a rule.
_OBSERVED = re.compile(
    rf"\b{_FINDS}\s+that\s+(?P<clause>(?:(?:the|this|that|his|her|their)\s+)?(?:\w+\s+)?"
    rf"(?:{_CASE_NOUN}|number|amount|total|price|balance|status|membership|level)s?\b[^,;]*)",
    re.IGNORECASE,
)
_MODAL = re.compile(
    r"\b(?:must|mustn't|can|cannot|can't|could|may|might|should|shouldn't|shall|will|won't|would|needs?|has\s+to|"
    r"have\s+to|only|never|always|allowed|permitted|required|forbidden|prohibited)\b",
    re.IGNORECASE,
)
# One thing's state stated outright at the start of a clause: "The flight was not cancelled.", "since
# the flight is basic economy", "as the user is healthy". Past forms always ("the traveler was
# short-changed"); the present only with a state after it, not a passive ("the user is charged the
# difference" is a rule in the present), nor with a duty ("is required to pay").
_STATE = re.compile(
    rf"(?:^|\b(?:and|but|so|since|because|as)\s*,?\s+|[,;:]\s+)(?:(?:the|this|that)\s+)?{_CASE_NOUN}(?:'s\s+\w+)?\s+"
    r"(?:(?:was|were|wasn't|weren't|has\s+been|had\s+been)\b"
    r"|(?:is|isn't)\s+(?!(?:not\s+)?(?:\w+ed|\w+en|paid|made|sent|kept|held|told|given|taken|required|allowed|"
    r"permitted|able|expected|supposed|entitled|obliged|responsible|to)\b))",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def case_fact(text: str) -> tuple[str, str] | None:
    """(sentence, reason) for the first sentence of `text` that states one case's facts, or None.

    Such a sentence, under no condition, says what the agent finds out about one case ("The agent
    identifies that user is not a Gold member but a Regular member.") or what one user, flight or
    reservation is or was ("The flight was not cancelled."). A sentence with a condition ("If the
    user is a Silver member, ...", "Verify that the flight was delayed before ...") passes, and so
    do the items after a lead-in: a colon that ends a line or follows a condition ("... if any of
    the following is true:"). Sentences end only at . ! or ?, so a rule's list of conditions joined
    by semicolons stays one.
    """
    for sentence in _SENTENCE.split(text):
        plain = re.sub(r"^[\s\"'(*-]+", "", sentence).strip()
        head, colon, tail = plain.partition(":")
        lead_in = bool(colon) and (not tail.strip() or tail.startswith("\n") or _CONDITION.search(head) is not None)
        found = _fact(head if lead_in else plain)
        if found is not None:
            return plain, found
        if lead_in:
            return None
    return None


def _fact(sentence: str) -> str | None:
    """Why one sentence states one case's facts (`case_fact`), or None."""
    if not sentence or _CONDITION.search(sentence):
        return None
    seen = _OBSERVED.search(sentence)
    if seen is not None and not _MODAL.search(seen.group("clause")):
        return "says what the agent finds out about one case, not what it must do in every case of its kind"
    if _STATE.search(sentence):
        return "states what one user, flight or reservation is or was, not what the agent must do"
    return None
