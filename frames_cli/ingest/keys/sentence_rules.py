"""The rules that read one sentence of a reviewer's comment: a requirement, a story, tone, a note, or unread.

`read_sentence` is the unit of the answer key (`ingest/keys/answer_key.py` reads a comment sentence
by sentence with it). Each sentence is read in this order, the first rule that applies deciding:

1. a lead-in ("Two rules:", "Missing steps:") → note;
2. tone ("curt", "condescending", "too long", "unfortunately" …) → note: tone is never the key;
3. a vague warning ("be careful", "tricky"), a note to the team ("next time", "check whether the
   agent …") or a pointer ("see the FAQ", "that's in section 7") → note; a judgement of the
   answer ("“Always” is wrong") → narrative;
4. the agent as subject ("The agent told him …", "Bot only asked …") → narrative, unless it states
   the agent's duty ("The agent should have told her to …", "The bot needs to verify …") → requirement;
5. the reviewer speaking ("I had to correct this"), or a person (she, he, a name, "the customer")
   in a past-tense story ("she was told otherwise") → narrative, marker or not; how someone felt
   ("upset", "confused") → narrative; a person or the reviewer's "we" as subject without a rule
   marker → narrative;
6. a rule marker outside quotes (must, never, only, can't, has to, need to, at least, within N days
   …; muss, debe, doit …; "users can", "se puede") → requirement;
7. an imperative ("Ask for the order number.", not one told in the past: "Refund requests dropped …")
   → requirement; a short exclamation ("Ugh.") → note;
8. a past-tense story ("Customer's package arrived on the 3rd.") → narrative (a participle after a
   present verb, "needs a form approved", is not past); so is a sentence that reads like a rule in
   plain words but states none (`ingest.keys.narrative`: a past event by its tense or a time word,
   the agent, one person, a judgement, a person's state);
9. a rule in plain words: a present-tense statement (is, are, goes to, lasts, costs, needs, has …),
   a figure (45 days, 15 %, $6.99, once a year), a condition ("If it's a training conference …"),
   a correction by contrast ("…, not the customer") or a role in the present ("The borrower signs
   …") → requirement;
10. anything else → unread: never the key, and the key is marked unsure, since a person may read a
   requirement there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from frames_cli.grammar import narrates
from frames_cli.ingest.keys.comment_text import AGENT
from frames_cli.ingest.keys.narrative import narrative

# Rule markers: deontic and eligibility words (English, German, Spanish, French) and limits.
_MARKER = re.compile(
    r"\b(must|never|always|only|mustn't|cannot|can't|can not|may not|not allowed|allowed to|is not permitted|required|"
    r"requires?|need(?:s)? to|has to|have to|should(?:n't| not)?(?: have)?|ought to|don't|do not|doesn't|does not|"
    r"not eligible|eligible|prohibited|forbidden|mandatory|compulsory|obligatory|at most|at least|no more than|up to|"
    r"within \d+|no later than|per (?:the )?policy|policy (?:says|states|requires)|according to (?:the )?policy|"
    r"but not|muss|müssen|darf|dürfen|nur|nie|niemals|immer|erforderlich|pflicht|verpflichtend|debe|deben|debería|"
    r"no puede|no pueden|nunca|siempre|solo|sólo|obligatorio|hay que|tiene que|tienen que|se requiere|doit|doivent|"
    r"ne peut|ne peuvent|jamais|toujours|seulement|obligatoire|il faut)\b"
    # The reviewer quoting the rule: 'Policy: "…"'.
    r"|\b(?:policy|rule)\s*:",
    re.IGNORECASE,
)
_AGENT_SUBJECT = re.compile(rf"^(?:(?:but|and|then|instead|also|so|again)\s*,?\s+)?{AGENT}(?:'s)?\b", re.IGNORECASE)
# The agent's duty: a deontic word within three words of the agent as subject.
_AGENT_DUTY = re.compile(
    rf"^(?:(?:but|and|then|instead|also|so)\s*,?\s+)?{AGENT}\s+(?:\w+\s+){{0,2}}?"
    r"(?:should(?:n't| not)?|must|needs? to|has to|have to|ought to|is (?:required|supposed|expected) to|never|always|"
    r"muss|debe|debería|doit|devrait)\b",
    re.IGNORECASE,
)
_PERSON = re.compile(
    r"^(?:(?:but|and|then|so|also)\s*,?\s+)?(?:she|he|her|his|him|she'd|he'd|she's|he's|"
    r"(?:mr|mrs|ms|dr|herr|frau|señor|señora|sr|sra|monsieur|madame|mme)\.?\s|"
    r"(?:el|la) (?:cliente|viajero|viajera|usuario)|le client|la cliente|der kunde|die kundin)\b",
    re.IGNORECASE,
)
# A role as subject ("the customer", "the traveler's supervisor"): a story when told in the past,
# a rule when stated in the present ("The traveler must also paste …").
_ROLE = re.compile(
    r"^(?:(?:but|and|then|so|also)\s*,?\s+)?the (?:customer|traveler|traveller|client|caller|user|borrower|applicant|"
    r"buyer|guest|employee|person|lady|guy)\b",
    re.IGNORECASE,
)
# How someone felt: a story, whatever the tense ("The customer is upset.").
_FEELING = re.compile(
    r"\b(?:upset|angry|furious|annoyed|confused|happy|unhappy|frustrated|worried|stressed|pleased|thrilled|"
    r"disappointed|embarrassed|verwirrt|verärgert|enojad[oa]|enojó|molest[oa]|fâché|énervé)\b",
    re.IGNORECASE,
)
# A capitalised name, then a verb of a story: "Kaitlyn asked twice", "Sam from the DC office asked".
_NAMED = re.compile(
    r"^[A-ZÀ-Ý][a-zà-ÿ]+(?: [A-ZÀ-Ý][a-zà-ÿ]+)?(?: from [\w ]{1,30})? (?:asked|was|had|got|called|said|wanted|paid|"
    r"tried|hat|war|wrote|came)\b"
)
# The reviewer speaking: "I" (never a rule's voice), or "we" as a subject ("is how we end up …");
# "us" and "our" are often the company in a rule ("… go through the seller, not through us").
_FIRST_PERSON = re.compile(r"\b(?:i(?![.\w])|i'm|i'd|i've|i'll|me|my|myself|we|we're|we've)\b", re.IGNORECASE)
_SINGULAR_FIRST = re.compile(r"(?:^|[\s,;(])(?:i|i'm|i'd|i've|i'll)\s", re.IGNORECASE)
_TONE = re.compile(
    r"\b(tone|curt|rude|polite|impolite|friendl(?:y|ier)|warm(?:er)?|cold|condescending|patroni[sz]ing|snarky|"
    r"sarcastic|too long|too short|too wordy|verbose|wordy|rambl\w*|apologi[sz]\w*|unfortunately|greet\w*|empath\w*|"
    r"vague|vage|vago|zu lang|trop long)\b",
    re.IGNORECASE,
)
_VAGUE = re.compile(
    r"\b(be careful|careful|tricky|watch out|heads up|hmm+|not sure|sorgfältig|cuidado|attention)\b", re.IGNORECASE
)
_META = re.compile(
    r"\b(next time|check whether the agent|whether the agent|is the agent reading|reading the [\w-]+ page|"
    r"the team has heard|told the team|i've told|file (?:a|the) ticket|retrain|escalated (?:this|it) to)\b",
    re.IGNORECASE,
)
_STORY_START = re.compile(
    r"^(?:called|turns out|took me|last (?:week|month|spring|summer|fall|winter|year)|yesterday|earlier|"
    r"apparently|honestly|long story|anyway)\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(was|were|had|did|got|said|told|asked|paid|sent|went|came|took|gave|made|wrote|arrived|declined|offered|"
    r"accepted|refunded|quoted|counted|charged|handled|tried|called|booked|cancell?ed|wanted|apologi[sz]ed|listed|"
    r"flagged|received|missed|forgot|ignored|promised|approved|denied|processed|shipped|lost|happened|war|hat|hatte|"
    r"dijo|fue|était|a dit)\b",
    re.IGNORECASE,
)
# A past form that is a passive or perfect of a rule ("are refunded", "must be approved", "is charged") is not a story.
_PASSIVE_BEFORE = re.compile(
    r"\b(?:is|are|be|been|being|get|gets|not|n't|only|always|never|must|can|may)\s+(?:\w+ly\s+)?$", re.IGNORECASE
)
_PREDICATE = re.compile(
    r"\b(?:is|are|isn't|aren't)\s+(?:\w+\s+){0,2}?(?:reimbursable|refundable|reimbursed|refunded|required|covered|"
    r"allowed|accepted|eligible|free|waived|deducted|charged|referred|booked|paid|returnable|exempt|due|capped|limited|"
    r"payable|needed|treated|handled|counted|applied|processed|sent|given|issued|approved|not)\b|\b(?:needs?|requires?|"
    r"goes|go|lasts?|costs?|counts?|means|gets?|applies|apply|covers?|includes?|takes?|expires?|drops? off|ships?|"
    r"pays?|approves|moves|stays|starts|ends|runs|carry|carries|closes|opens|belongs|depends|equals|steps in|handles|"
    r"decides|owns|receives|qualif(?:y|ies)|excludes?|has|have|uses?|comes? with|earns?|accrues?|bezahlt|zahlt|gilt|"
    r"gehört|paga|pagan|cubre|incluye|paie|couvre|inclut)\b"
    # A present-tense statement of what is so: "Payday is the last business day", "It's 12 weeks paid".
    r"|\b(?:is|are|isn't|aren't)\b|\b(?:it|that|there|this)['’]s\b",
    re.IGNORECASE,
)
_FIGURE = re.compile(
    r"\d|\b(?:once|twice|daily|weekly|monthly|yearly|annually|per (?:day|week|month|year))\b", re.IGNORECASE
)
# Permission in a rule's voice: "you can take …", "they may …" (not "nothing can be done", a story).
_PERMISSION = re.compile(
    r"\b(?:you|they|one|anyone|everyone)\s+(?:can|may)\b|^(?:(?:a|an|any|every|each|all|"
    r"the)\s+)?(?:[\w-]+\s+){0,2}?(?:[\w-]+s|user|customer|member|travell?er|employee|passenger|applicant|borrower|"
    r"guest)\s+(?:can|may)\b",
    re.IGNORECASE,
)
# A correction by contrast: "X, not Y" ("… pays the assessor, not the customer").
_CONTRAST = re.compile(r",\s*(?:not|nicht|no|pas|non|ni)\b", re.IGNORECASE)
# Permission or possibility stated impersonally in German, Spanish, French ("se puede hacer", "kann", "peut").
_FOREIGN_MODAL = re.compile(
    r"\b(?:se puede|se pueden|puede|pueden|kann|können|darf man|peut|peuvent|on peut)\b", re.IGNORECASE
)
# A judgement of the agent's answer ("“Always” is wrong", "which is false"): the symptom, not the rule.
_JUDGEMENT = re.compile(
    r"\b(?:is|was|are|were)\s+(?:just\s+|simply\s+|plainly\s+)?(?:wrong|false|incorrect|misleading|not true|untrue|"
    r"made up|invented|nonsense)\b",
    re.IGNORECASE,
)
# A pointer to where the rule is written ("That's in section 7 (see the intranet).").
_REFERENCE = re.compile(
    r"\b(?:see|cf\.?)\s+(?:the\s+)?(?:intranet|faq|wiki|handbook|page|section|link|guide|docs?|kb)\b|^(?:that's|"
    r"this is|it's) in (?:section|the)\b",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"^(?:if|when|whenever|unless|for|before|after|once|anything|any|every|each|all|no)\b", re.IGNORECASE
)
_IMPERATIVE = re.compile(
    r"^(?:ask|check|verify|confirm|email|send|call|tell|offer|refund|escalate|transfer|use|get|fill|quote|explain|"
    r"direct|route|submit|attach|collect|request|require|include|mention|state|give|issue|cancel|book|refer|notify|"
    r"inform|apply|add|remove|update|create|open|file|upload|provide|point|advise|bring|log|record|enter|keep|pay|"
    r"print|sign|take|write|save|contact|visit|go|make|ensure|report|return|follow|choose|select|pick|wait|reply|"
    r"answer|say|show|list|approve|deny|decline|accept|reject|register|schedule|forward|copy|share|print|scan|"
    r"photograph|submit|reimburse|charge|waive|credit|look up|find|search|read|review|compare|calculate|round|"
    r"convert)\b",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(r":\s*$")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a comment and how it was read.

    Attributes:
        text: the sentence as the reviewer wrote it (links reduced to their words, verdict words cut).
        kind: "requirement", "narrative", "tone", "note" or "unread".
        why: the rule that decided, in a few words (for the review table).
        mixed: a requirement that also tells of a person or a past event (the key is unsure).
    """

    text: str
    kind: str
    why: str
    mixed: bool = False


def words_of(text: str) -> list[str]:
    """The words of `text` (letters, with an inner apostrophe), numbers and punctuation left out."""
    return _WORD.findall(text)


# A present-tense main verb before a past form makes that form a participle ("It's 12 weeks paid").
_COPULA = re.compile(r"\b(?:is|are|isn't|aren't|(?:it|that|there|this|what)['’]s)\b", re.IGNORECASE)
# A present-tense rule verb before a past form: "… needs an expense request approved before the trip".
# Past auxiliaries are a story wherever they stand ("she was told otherwise").
_PAST_AUX = frozenset({"was", "were", "had", "did", "war", "hatte", "fue", "était"})
_RULE_VERB = re.compile(r"\b(?:needs?|requires?|gets?|has|have|must|should)\b", re.IGNORECASE)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|„[^“”]*[“”]|«[^»]*»")


def _unquoted(text: str) -> str:
    """`text` without its double-quoted spans: quoted words are someone else's (the agent's, the
    policy's), so a rule marker or a first person inside them says nothing of the reviewer's sentence."""
    return _QUOTED.sub(" … ", text)


def _past_story(text: str) -> bool:
    """Whether `text` tells a past event: a past form not read as the passive of a rule, nor after a
    present-tense main verb."""
    for m in _PAST.finditer(text):
        before = text[: m.start()]
        if m.group(1).casefold() in _PAST_AUX or not (
            _PASSIVE_BEFORE.search(before) or _COPULA.search(before) or _RULE_VERB.search(before)
        ):
            return True
    return False


def read_sentence(text: str) -> Sentence:
    """How one sentence is read (the numbered rules of the module docstring)."""
    words = words_of(text)
    own = _unquoted(text)
    marker = bool(_MARKER.search(own))
    note = _note(text, words, marker)
    if note is not None:
        return note
    if _AGENT_SUBJECT.match(text):
        if _AGENT_DUTY.match(text):
            mixed = bool(_PERSON_WORD.search(text))
            return Sentence(text, "requirement", "the agent's duty", mixed)
        return Sentence(text, "narrative", "what the agent did")
    person = bool(_PERSON.match(text) or _NAMED.match(text) or _STORY_START.match(text))
    past = _past_story(own)
    if _SINGULAR_FIRST.search(f" {own}") or ((person or _ROLE.match(text)) and past):
        # The reviewer's own experience, or what happened to one person: never a rule, marker or not.
        return Sentence(
            text, "narrative", "the reviewer speaking" if not person and not _ROLE.match(text) else "a person's story"
        )
    if _FEELING.search(own) and not marker:
        return Sentence(text, "narrative", "how someone felt")
    first = bool(_FIRST_PERSON.search(own))
    if (person or first) and not marker:
        return Sentence(text, "narrative", "a person's story" if person else "the reviewer speaking")
    return _rule(text, words, own, marker, past, first)


def _note(text: str, words: list[str], marker: bool) -> Sentence | None:
    """A lead-in, tone, a vague warning, a note to the team, a pointer or a judgement of the answer; else None."""
    if _LEAD_IN.search(text) and len(words) <= 6:
        return Sentence(text, "note", "lead-in")
    if _TONE.search(text):
        return Sentence(text, "tone", "tone")
    if _VAGUE.search(text) and not (marker and len(words) > 6):
        return Sentence(text, "note", "vague warning")
    if _META.search(text):
        return Sentence(text, "note", "note to the team")
    if _REFERENCE.search(text) and not marker:
        return Sentence(text, "note", "a pointer to where the rule is")
    if _JUDGEMENT.search(text) and not marker:
        return Sentence(text, "narrative", "a judgement of the answer")
    return None


def _rule(text: str, words: list[str], own: str, marker: bool, past: bool, first: bool) -> Sentence:
    """A sentence about no person: a rule (marked, a step, in plain words), an exclamation, a past event."""
    if marker or _PERMISSION.search(own) or (_FOREIGN_MODAL.search(own) and not past):
        # A rule about "the traveler" is general; one about "her" or
        # "María", or in the reviewer's voice, may be one case's story.
        mixed = bool(_PERSON_WORD.search(own) or _NAMED.match(text) or first)
        return Sentence(text, "requirement", "rule marker", mixed=mixed)
    # "Refund requests dropped …" opens with a verb's word but is told in the past.
    if _IMPERATIVE.match(text) and not _past_story(text) and not narrates(text):
        return Sentence(text, "requirement", "a required step")
    if len(words) <= 3 and not _PREDICATE.search(text):
        return Sentence(text, "note", "exclamation")
    if past:
        return Sentence(text, "narrative", "past event")
    story = narrative(own)
    if story is not None:
        return Sentence(text, "narrative", story)
    if (
        _PREDICATE.search(text) or _FIGURE.search(text) or _CONDITION.match(text) or _IMPERATIVE.match(text)
        or _CONTRAST.search(own) or _ROLE.match(text)
    ):
        return Sentence(text, "requirement", "rule in plain words")
    return Sentence(text, "unread", "no rule and no story recognised")


# Person words anywhere in a requirement: the key holds a rule about one person (unsure).
_PERSON_WORD = re.compile(r"\b(?:she|he|her|him|his|she's|he's)\b", re.IGNORECASE)
