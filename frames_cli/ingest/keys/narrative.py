"""Sentences of a reviewer's comment that read like a rule in plain words but state no requirement.

A requirement in plain words ("Minibar items are charged at checkout.", "The resort fee is $18
per night.") has no rule marker, so the rule reader (`ingest.keys.answer_key`) takes a present-tense
statement, a figure or a condition for one. The sentences around it often have the same shape
and state nothing the right answer needs:

- a past event, told in the past tense whatever its verb ("The guest showed up at 9 and waited
  four hours.", "The feed-in tariff ended in 2023, which is …"): the tense of the main clause, read
  by the part-of-speech tagger (`grammar.narrates`), so no list of verbs decides;
- an event placed in the past by a time word ("Same mistake as last week.");
- the agent or the bot as an actor or an owner ("… is probably where the agent got the 8 cents",
  "Not the bot's call."): what the agent did or may decide is the symptom, not the rule;
- one person ("she", "his", "He'll be charged …"): a consequence or a fact of one case;
- a judgement of what happened ("That's a serious breach."): "that"/"this" pointing back at the story;
- where one person lives, what they want, know or feel ("The customer lives 3 miles away."): a
  verb only a person is the subject of, in the present, after a definite subject.

`narrative` says which, or None. It reads only sentences that carry no rule marker (must, never,
only, can't …): a marked sentence states a requirement whatever else it tells, and the rule
reader marks it unsure when it also tells of a person.
"""

from __future__ import annotations

import re

from frames_cli.grammar import narrates

# A clause after ", which …" or ", who …" comments on the sentence; its tense is not the main clause's.
_COMMENT_CLAUSE = re.compile(r",\s*(?:which|who|whom|whose|where)\b.*$", re.IGNORECASE)
# Present-tense main verbs the tagger reads as nouns ("Early cancellation costs …", "The rate lock
# lasts …"): with one, a past form elsewhere is a participle ("…, capped at $200").
_PRESENT = re.compile(
    r"\b(?:is|are|isn't|aren't|(?:it|that|there|this|what)['’]s|costs|lasts|goes|needs|gets|takes|pays|means|"
    r"applies|counts|stays|starts|ends|runs|covers|includes)\b",
    re.IGNORECASE,
)
# Deictic words that place an event before now: "last week", "yesterday", "two days ago".
# "last year's W-2" is a document; "in the last 7 years" a rule's window.
_PAST_TIME = re.compile(
    r"\b(?:yesterday|the other day|earlier today|this morning|\w+ ago|last (?:week|month|year|time|night|spring|"
    r"summer|fall|autumn|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?!['’]s))",
    re.IGNORECASE,
)
# The agent as an actor or an owner, anywhere in the sentence; "a human agent" is a role of the business.
_AGENT = re.compile(
    r"\b(?:the|our|this|that)\s+(?:agent|bot|chatbot|assistant|ai)\b|\b(?:bot|chatbot)(?:['’]s)?\b", re.IGNORECASE
)
# One person: a pronoun of the third person singular, contracted or not; "his or her", "he or she"
# speak of anyone, as rules do.
_ONE_PERSON = re.compile(r"\b(?:she|he|her|hers|him|his|herself|himself)\b", re.IGNORECASE)
_ANYONE = re.compile(r"\b(?:he or she|she or he|his or her|her or his|him or her|her or him|s/he)\b", re.IGNORECASE)
# "That's …" / "This is …" pointing back at what happened, or "It's a …" / "It was so …" judging it,
# with no figure, contrast or condition of a rule ("It's 12 weeks paid, not 6." is one).
_JUDGEMENT = re.compile(
    r"^(?:(?:that|this)(?:['’]s|\s+(?:is|was))|it(?:['’]s|\s+(?:is|was))\s+(?:a|an|so|such|really|very|pretty|quite|too)"
    r")\b(?!.*(?:\d|,\s*not\b|\bif\b|\bwhen\b))",
    re.IGNORECASE,
)
# A definite subject, then a verb only a person is the subject of (being somewhere, wanting, knowing,
# feeling) in the present: a fact of one case ("The customer lives 3 miles away."). A rule's present
# tells what is done or due ("The borrower signs …", "The policy says …").
_STATE = re.compile(
    r"^(?:the|this|our)\s+(?:[\w-]+\s+){1,2}?(?:\w+ly\s+)?(?:lives|seems|wants|wishes|knows|thinks|believes|feels|"
    r"likes|loves|hates|prefers|hopes|insists|remembers|understands)\b",
    re.IGNORECASE,
)


def narrative(text: str) -> str | None:
    """Why `text` (a sentence with no rule marker) states no requirement, or None when it may state one."""
    if _AGENT.search(text):
        return "about the agent"
    if _ONE_PERSON.search(_ANYONE.sub(" ", text)):
        return "about one person"
    if _STATE.match(text):
        return "a fact of one person"
    if _JUDGEMENT.match(text):
        return "a judgement of what happened"
    if _PAST_TIME.search(text):
        return "past event"
    main = _COMMENT_CLAUSE.sub("", text)
    if not _PRESENT.search(main) and narrates(main):
        return "past event"
    return None
