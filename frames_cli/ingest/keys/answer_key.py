"""The answer key of a reviewer's comment: the requirements the reviewer states, each a whole sentence of the comment.

A rejected row's comment mixes what the right answer needs ("Taxis are reimbursable local
transportation, receipts over $75.") with the story, the tone and the people ("Agent made up a
rule, we never say taxis are banned"). The key holds every requirement the reviewer states (rules,
correct figures, required steps), each a whole sentence as the reviewer wrote it, and nothing else:
never a fragment, never policy text the reviewer did not write, never a link target. The rest are
diagnosis notes. This module is the deterministic reader (`extract_key`), the offline default and
the fallback of the model reader (`ingest/keys/answer_key_model.py`); both return an `AnswerKey`.

Each sentence (`comment_text.split_sentences`, verdict words cut) is read by the rules of
`ingest.keys.sentence_rules` (`read_sentence`): a requirement, narrative, tone, a note, or unread.

The comment is read sentence by sentence (`read_comment`), with two exceptions: a sentence whose
only requirement follows a colon ("I checked with billing: reconnection costs $75 …") is read as
its lead-in and that clause, and a lead-in of its own ("Correct process:") makes the unread list
items after it the steps it announces.

A comment with no requirement gives no key, and says why (`AnswerKey.none`): only a link, only
"be careful", only tone, only a story. The key is unsure (`AnswerKey.unsure`, a reason) when a
requirement also carries a person or a past event, or a sentence was left unread: such a row is
marked `review: needed` and counts nowhere until a person confirms it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from frames_cli.ingest.keys.comment_text import drop_verdict, split_sentences, strip_links, wrong_claims
from frames_cli.ingest.keys.sentence_rules import Sentence, read_sentence, words_of

#: How the key was read: by these rules, or by a model (its name) with these rules as the check.
RULES = "rules"

# A pointer to elsewhere: what is left of a comment whose content was a link.
_POINTER = re.compile(r"^(?:see|cf|check|per|ref|link|source|faq|more|read|look at)\b", re.IGNORECASE)


@dataclass(frozen=True)
class AnswerKey:
    """What a rejected row's comment says the right answer needs.

    Attributes:
        requirements: whole sentences of the comment, each a requirement the reviewer states, in order.
        sentences: every sentence with its reading (requirements included).
        none: why there is no requirement ("" when there is one): "link", "vague", "tone",
            "narrative" or "empty", see `NONE_REASONS`.
        unsure: why a person should confirm the key ("" when sure).
        by: `RULES`, or the model that read it.
        links: Markdown links and URLs the comment held (their targets are never in the key).
        rejected: the agent's wrong answers the reviewer quotes ('The agent wrote "X" which is
            false'): a right answer must not claim them (`wrong_claims`).
    """

    requirements: list[str]
    sentences: list[Sentence] = field(default_factory=list)
    none: str = ""
    unsure: str = ""
    by: str = RULES
    links: int = 0
    rejected: list[str] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """The sentences that are not requirements (the story, tone, names): diagnosis notes."""
        return [s.text for s in self.sentences if s.kind != "requirement"]


#: Why a comment gives no key, as the account says it.
NONE_REASONS = {
    "empty": "the comment is empty",
    "link": "the comment is only a link: a link target states no requirement (open it and write the rule as the "
    "correct answer)",
    "vague": 'the comment is only a warning ("be careful"): it states no requirement',
    "tone": "the comment is only about tone: tone is advice, never an answer key",
    "narrative": "the comment tells what happened but states no requirement",
}


def extract_key(comment: str | None) -> AnswerKey:
    """The answer key of `comment` by the rules above (never raises; an empty comment gives no key)."""
    if not comment or not comment.strip():
        return AnswerKey([], none="empty")
    text, links = strip_links(comment)
    read = read_comment(text)
    requirements = [s.text for s in read if s.kind == "requirement"]
    unread = [s for s in read if s.kind == "unread"]
    if requirements:
        unsure = ""
        mixed = [s.text for s in read if s.kind == "requirement" and s.mixed]
        if mixed:
            unsure = f"a requirement also tells of a person or an event: {mixed[0]!r}"
        elif unread:
            unsure = f"a sentence was read as neither requirement nor story: {unread[0].text!r}"
        return AnswerKey(requirements, read, unsure=unsure, links=links, rejected=wrong_claims(text))
    return AnswerKey(
        [], read, none=_why_none(read, links),
        unsure=(f"no requirement found, but a sentence was not read: {unread[0].text!r}" if unread else ""),
        links=links, rejected=wrong_claims(text),
    )


def read_comment(text: str) -> list[Sentence]:
    """Every sentence of `text` (links already stripped) and how it was read, in order: the units a
    key is made of, for the rule reader and the model reader alike.

    Two readings look past one sentence. A sentence that states no requirement before a colon but
    one after it ("I checked with the billing team: reconnection costs $75 …") is two: the lead-in
    and the requirement, a clause the reviewer wrote whole. A lead-in of its own ("Correct process:")
    announces requirements: the sentences after it that no rule read (list items in plain words,
    "the advisor signs it") are the steps it announced, until a sentence that is no requirement.
    """
    read: list[Sentence] = []
    for raw in split_sentences(text):
        sentence = drop_verdict(raw)
        if sentence:
            read.extend(_read_with_colon(sentence))
    announced = False
    for i, s in enumerate(read):
        if s.why == "lead-in":
            announced = True
        elif announced and s.kind == "unread":
            read[i] = Sentence(s.text, "requirement", "a step the lead-in announces")
        elif s.kind != "requirement":
            announced = False
    return read


def _read_with_colon(sentence: str) -> list[Sentence]:
    """`sentence` read whole, or as its lead-in and its requirement when only the part after its
    first colon states one."""
    whole = read_sentence(sentence)
    head, colon, tail = sentence.partition(": ")
    if whole.kind == "requirement" or not colon or not tail.strip():
        return [whole]
    after = read_sentence(tail.strip())
    if after.kind != "requirement" or read_sentence(head).kind == "requirement":
        return [whole]
    return [Sentence(f"{head}:", "note", "a lead-in to the requirement after the colon"), after]


def _why_none(read: list[Sentence], links: int) -> str:
    """The `NONE_REASONS` key for a comment without a requirement."""
    if not read or (links and all(_POINTER.match(s.text) or len(words_of(s.text)) <= 4 for s in read)):
        return "link" if links else "empty"
    kinds = {s.kind for s in read}
    if "tone" in kinds and kinds <= {"tone", "note"}:
        return "tone"
    if any(s.why == "vague warning" for s in read) and kinds <= {"note", "tone"}:
        return "vague"
    return "narrative"
