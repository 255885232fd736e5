"""The sentences of a policy section and what each one does: state a rule, give an instruction,
point elsewhere, or fill.

Sentences are read from Markdown lines (the linked reading view, `PolicyDocument.linked`): a
paragraph's or list item's wrapped lines are joined first, then cut after `.`, `!` or `?` (never
after "i.e.", "e.g." and other abbreviations); each keeps the file line it starts on. A section
with no rule and no instruction (a greeting, a "Questions?" contact line, a list of links, an
introduction that points below) has no substance: it is never a skill of its own
(`sectioning.cut_document`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from frames_cli.coldstart.links import IN_PAGE_LINE
from frames_cli.formats.markup import plain
from frames_cli.words import rule_sentences, word_count

_SKIP_LINE = re.compile(r"^\s*(?:\||#{1,6}(?:\s|$)|[-=]{3,}\s*$|```|~~~)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?:\s|$)")
_ORDERED = re.compile(r"^\s*\d+[.)]\s")
_TABLE = re.compile(r"^\s*\|.*\|")
# A cut after ".", "!" or "?" and spaces, before anything but a lower-case letter.
_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[^a-z\s])|(?<=[。！？])")
# Words whose final "." ends no sentence.
_ABBREVIATIONS = re.compile(
    r"(?:\b(?:i\.e|e\.g|etc|vs|approx|cf|al|no|nos|st|mr|mrs|ms|dr|jr|sr|inc|ltd|co|dept|min|max|ext|fig|a\.m|p\.m|"
    r"u\.s)\.|\b[A-Z]\.)$",
    re.IGNORECASE,
)
_LINK = re.compile(r"(?<!!)\[([^\]\[]*)\]\(([^)\s]*)\)|<(?:https?://|mailto:)[^>]+>")
_ADDRESS = re.compile(r"\S+@\S+\.\w+|https?://\S+|#[a-z][\w-]*")
# Words that make a sentence lean on text it does not hold: "the instructions below", "here".
_DEICTIC = re.compile(
    r"\b(?:here|below|above|the following|these (?:steps|tips|instructions|links|pages)|this (?:page|step|guide|"
    r"section|link))(?![\w-])",
    re.IGNORECASE,
)
# Clauses before an imperative: "If you do, ...", "To update it, ...", "Once approved, ...".
_LEAD_CLAUSE = re.compile(
    r"^(?:(?:if|when|once|after|before|to|for|in|on|while|from|with|at)\b[^,]{0,120},\s*)", re.IGNORECASE
)
_LEAD_WORD = re.compile(
    r"^(?:note|important|tip|first|then|next|finally|also|otherwise|please|now|optional)\b[:,]?\s*", re.IGNORECASE
)
# Verbs an instruction starts with (imperative mood), in lower case.
IMPERATIVES = frozenset(
    """
    add apply ask attach avoid book bring call cancel change check choose click collect complete confirm consider
    contact continue copy create deny describe do download edit email enter explain fill find follow forward gather
    get give go head include inform install keep list log login look make mark navigate note notify offer open pay
    pick place print provide read receive record refuse register reply report request reserve return review save
    scroll search select send set share sign specify start stop submit take tell transfer try update upload use
    verify visit wait withdraw write
    """.split()
)
# A pointer: an instruction whose object is a link or a place elsewhere ("Check out [the screen
# shots](...)", "consider [these tips](...)", "read the instructions here").
_POINTING_VERB = re.compile(
    r"^(?:see|check out|check|consider|read|visit|follow|click|go to|refer to|review|look at)\s+(?:the\s+)?\[",
    re.IGNORECASE,
)
# Statements of what is needed or allowed that carry no marker of `words.rule_sentences`.
_NORMATIVE = re.compile(
    r"\b(?:sufficient|recommend(?:ed|s)?|responsible for|reimburs(?:able|ed)|acceptable|approv(?:al|ed) (?:is|are)|"
    r"may|should)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Sentence:
    """One sentence of policy prose.

    Attributes:
        text: plain text (links as their text, emphasis and list markers dropped).
        marked: the Markdown it was read from (links kept), for telling a pointer.
        line: the file line (1-based) it starts on.
        item: it is (part of) a list item.
    """

    text: str
    marked: str
    line: int
    item: bool = False

    @property
    def words(self) -> int:
        """Words of the plain text (`words.word_count`: a CJK character counts as one)."""
        return word_count(self.text)

    def states_rule(self) -> bool:
        """It carries a rule marker (`words.rule_sentences`: must, only, never, at most, ...)."""
        return bool(rule_sentences(self.text))

    def normative(self) -> bool:
        """It says what is required, enough, allowed or recommended, with or without a rule marker."""
        return self.states_rule() or bool(_NORMATIVE.search(self.text))

    def instruction(self) -> bool:
        """It tells the reader to do something: a clause starting with an imperative verb, after
        any "If ...," or "To ...," lead and words such as "Please" or "Then"."""
        for clause in re.split(r"[,;]\s+(?:and\s+|then\s+)?|\s+and\s+then\s+|\s+then\s+", self.text):
            clause = _LEAD_WORD.sub("", _LEAD_CLAUSE.sub("", _LEAD_WORD.sub("", clause.strip())))
            first = clause.split(" ", 1)[0].lower().strip("*_\"'“")
            # "..., modify, or cancel flight reservations": a verb in a list is no instruction.
            if first in IMPERATIVES and len(clause.split()) >= 3:
                return True
        return False

    def pointer(self) -> bool:
        """It only sends the reader elsewhere: a link (or address) with at most one word of its
        own ("Yes: [Get travel authorization](...)", "- [GSA Telework Policy](...)"), or an
        instruction whose object is a link ("Check out [the screen shots](...)")."""
        rest = _ADDRESS.sub(" ", _LINK.sub(" ", self.marked))
        if rest != self.marked and word_count(plain(rest)) <= 1:
            return True
        body = _LEAD_WORD.sub("", _LEAD_CLAUSE.sub("", _ITEM.sub("", self.marked).strip()))
        return bool(_POINTING_VERB.match(body))

    def deictic(self) -> bool:
        """It leans on text it does not hold: "the instructions below", "more information can be
        found here"."""
        return bool(_DEICTIC.search(self.text))

    def filler(self) -> bool:
        """It carries nothing to act on: an exclamation or question without a rule, a lead-in
        ending in ":", or fewer than four words."""
        end = self.text.rstrip(" )\"'”’")[-1:]
        return self.words < 4 or end == ":" or (end in "!?" and not self.states_rule())


def _paragraphs(lines: list[tuple[int, str]]) -> list[tuple[list[tuple[int, str]], bool]]:
    """(lines, is a list item) per paragraph or list item; headings, table rows, fences, rules
    and lines that are only an in-page link (a table of contents entry, a "[Having Trouble](#...)"
    jump) end one and are left out, unless such a link continues an open paragraph ("...
    (this threshold is $25 for" / "[local vouchers](#...).")."""
    out: list[tuple[list[tuple[int, str]], bool]] = []
    open_ = False
    for no, line in lines:
        toc = bool(IN_PAGE_LINE.match(line)) and (not open_ or bool(_ITEM.match(line)))
        if not line.strip() or _SKIP_LINE.match(line) or toc:
            open_ = False
            continue
        if _ITEM.match(line) or not open_:
            out.append(([(no, line)], bool(_ITEM.match(line))))
            open_ = True
        else:
            out[-1][0].append((no, line))
    return out


def sentences(lines: list[tuple[int, str]]) -> list[Sentence]:
    """The sentences of Markdown `lines` ((file line number, text) pairs), in order."""
    out: list[Sentence] = []
    for para, item in _paragraphs(lines):
        joined, starts = "", []
        for no, line in para:
            starts.append((len(joined) + (1 if joined else 0), no))
            joined = f"{joined} {line.strip()}" if joined else line.strip()
        # A list marker ("1. ") is no sentence of its own.
        marker = _ITEM.match(joined)
        pos = marker.end() if marker else 0
        pieces: list[tuple[int, str]] = []
        for cut in _END.finditer(joined, pos):
            head = joined[pos : cut.start()]
            if _ABBREVIATIONS.search(head.rstrip("\"'”’)]")):
                continue
            pieces.append((pos, head))
            pos = cut.end()
        pieces.append((pos, joined[pos:]))
        for offset, marked in pieces:
            text = plain(marked)
            if not text:
                continue
            at = max((no for start, no in starts if start <= offset), default=para[0][0])
            out.append(Sentence(text, marked.strip(), at, item))
    return out


def has_substance(found: list[Sentence], lines: list[str], *, preamble: bool = False) -> bool:
    """True when text with sentences `found` (from Markdown `lines`) states a rule or procedure.

    It does when a sentence states a rule or what is needed or allowed, or gives an instruction,
    and is neither a pointer nor filler, or when it holds a table or a numbered list. A section
    (not a `preamble`, which introduces the document) also has substance when it states facts:
    two list items or a sentence of five words or more that is neither a pointer nor filler nor leans on
    text elsewhere ("User: each user has a profile containing: user id, email, ...", "What if who
    is traveling changes? A follow-up to the original email ... is sufficient.").
    """
    if sum(1 for ln in lines if _TABLE.match(ln)) >= 2 or sum(1 for ln in lines if _ORDERED.match(ln)) >= 2:
        return True
    facts = items = 0
    for s in found:
        if s.pointer():
            continue
        if not s.filler() and (s.normative() or s.instruction()):
            return True
        items += s.item
        if not s.filler() and not s.deictic():
            facts += s.words
    return not preamble and (facts >= 5 or items >= 2)
