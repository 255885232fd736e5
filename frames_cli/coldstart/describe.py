"""Verbatim descriptions: what a skill decides and when to use it, from its section's own rules and terms.

A description is the section's subject, its leading rule (the first sentence that states one,
else the first full sentence; never a table row, a lead-in or a lone heading word), the topics it
covers (its sub-headings and the labels that head a block, "Change cabin:"), the section's key
terms (words frequent in it and rare in the rest of its document) and when to use it. Reference
sections (definitions, scope, roles, the domain's basics, ...) say they are reference and name
what they define (no rule sentence; key terms only when they have no sub-headings), and general
rules say they apply to every task only when they state rules. Only the document's own text counts, so adding another
document never changes a description.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from frames_cli.coldstart.naming import strip_numbering
from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.markup import plain
from frames_cli.formats.policy import PolicyDocument, Section
from frames_cli.formats.skill import MAX_DESCRIPTION
from frames_cli.ingest.text import rule_sentences, tokens, word_count

#: Key terms a description lists.
TERMS = 20
# Longest leading rule quoted in a description (characters).
_RULE_CHARS = 220
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^a-z])|(?<=[。！？])")
_ITEM_START = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_ARTICLES = frozenset({"a", "an", "the"})
_SKIP_LINE = re.compile(r"^\s*(?:\||#{1,6}\s|[-=]{3,}\s*$|```|~~~)")
# A table-of-contents line: only a link to a place in the same page ("- [Changes made at the
# airport](#changes-made-at-the-airport)"); it repeats other sections' headings.
_TOC_LINE = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+)?(?:\*\*\[!\]\*\*\s*)?\[[^\]]*\]\(#[^)]*\)[\s.;,]*$")
# Heading words of boilerplate and reference sections; a heading made only of these (and at least
# one of `_REFERENCE_CORE`) is reference, not procedure.
_REFERENCE_CORE = frozenset(
    "definitions definition glossary terms terminology acronyms abbreviations scope purpose objective objectives "
    "roles responsibilities responsibility artifacts artefacts references history applicability authority ownership owner "
    "approval approvals control domain basic basics background concepts entities".split()
)
_REFERENCE_WORDS = _REFERENCE_CORE | frozenset("and of key the policy document documents related revision version change record records".split())
# Words too common in policy prose to tell sections apart.
_GENERIC_TERMS = frozenset(
    "must should may will need needs shall able also well like following include includes including each most more less "
    "one two three four five first last other others another such same only within without after before about above below "
    "here there where while every either both many much very even still just already always never cannot can't don't "
    "you'll you're it's that's you'd we're they're isn't aren't won't doesn't didn't i'm let's".split()
)


def is_reference(chunk: Chunk) -> bool:
    """True when the chunk's heading names boilerplate or reference matter (definitions, scope,
    purpose, roles and responsibilities, artifacts, references, revision history, ...)."""
    if not chunk.heading or chunk.kind == "general":
        return False
    found = [w.lower() for w in _WORD.findall(strip_numbering(plain(chunk.heading[-1], markers=False)))]
    return bool(found) and set(found) <= _REFERENCE_WORDS and bool(set(found) & _REFERENCE_CORE)


def states_rules(chunk: Chunk) -> bool:
    """True when the chunk's text states at least one rule (must, only, never, required, ...)."""
    return bool(rule_sentences(_prose(chunk)))


@dataclass(frozen=True)
class TermWeights:
    """Inverse document frequency of words over one document's sections (its own text only).

    idf(w) = ln((N + 1) / (df(w) + 1)) + 1, N sections, df(w) sections holding w (the smoothed
    form scikit-learn uses).
    """

    idf: dict[str, float]
    default: float

    @classmethod
    def of(cls, doc: PolicyDocument) -> TermWeights:
        """The weights of `doc`: each heading section's own lines count as one section."""
        texts: list[str] = []

        def walk(section: Section) -> None:
            texts.append("\n".join(doc.view[section.start - 1 : section.own_end]))
            for child in section.children:
                walk(child)

        walk(doc.root)
        df: Counter[str] = Counter()
        for text in texts:
            df.update(set(tokens(text)))
        n = len(texts)
        return cls({w: math.log((n + 1) / (c + 1)) + 1 for w, c in df.items()}, math.log(n + 1) + 1)

    def weight(self, word: str) -> float:
        """idf of `word`'s stem; an unseen word weighs as a word in no section."""
        return self.idf.get(_stem_of(word.lower()) or word, self.default)


def _prose(chunk: Chunk) -> str:
    """The chunk's reading text without headings, table rows and code fences."""
    return "\n".join(
        line for p in chunk.pieces for line in chunk.text(p).split("\n") if line.strip() and not _SKIP_LINE.match(line) and not _TOC_LINE.match(line)
    )


def key_terms(chunk: Chunk, weights: TermWeights, leave_out: set[str], k: int = TERMS) -> list[str]:
    """Up to `k` words that mark the chunk: (1 + ln tf) · idf over crude stems (`ingest.text.tokens`,
    so "bag" and "bags" are one term), shown in their most frequent written form; stop words,
    generic policy words and `leave_out` (stems the description already says) left out; ties in
    text order."""
    text = plain("\n".join(line for p in chunk.pieces for line in chunk.text(p).split("\n") if not _TOC_LINE.match(line)))
    counts: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    for raw in _WORD.findall(text):
        word = raw.lower().replace("’", "'")
        if len(word) < 3 or word in _GENERIC_TERMS or "'" in word:
            continue
        stem = _stem_of(word)
        if not stem or stem in leave_out:
            continue
        counts[stem] += 1
        # Keep the form as written ("Concur", "AdTrav"), lower case for ordinary words.
        forms.setdefault(stem, Counter())[raw if raw[1:].lower() != raw[1:] or raw.isupper() else word] += 1
    order = {w: i for i, w in enumerate(counts)}
    ranked = sorted(counts, key=lambda w: (-(1 + math.log(counts[w])) * weights.weight(w), order[w]))
    return [forms[w].most_common(1)[0][0] for w in ranked[:k]]


def _stem_of(word: str) -> str:
    found = tokens(word)
    return found[0] if found else ""


def prose_sentences(text: str) -> list[str]:
    """Sentences of Markdown prose as plain text: the wrapped lines of a paragraph or list item
    joined first, then cut after `.`, `!` or `?`."""
    paragraphs: list[list[str]] = []
    for line in text.split("\n"):
        if not line.strip() or _SKIP_LINE.match(line) or _TOC_LINE.match(line):
            paragraphs.append([])
        elif _ITEM_START.match(line) or not paragraphs:
            paragraphs.append([line])
        else:
            paragraphs[-1].append(line)
    out = []
    for para in paragraphs:
        joined = plain(" ".join(ln.strip() for ln in para))
        out += [s.strip() for s in _SENTENCE_END.split(joined) if s.strip()]
    return out


def leading_rule(chunk: Chunk) -> str:
    """The first sentence of three words or more that states a rule ("You must sign here."), else
    the first sentence of five words or more (never a lead-in ending in ":", and without a leading
    article number such as "第十六条"); "" when the chunk has neither (the subject and terms then
    carry it)."""
    found = [strip_numbering(s) for s in prose_sentences("\n".join(chunk.text(p) for p in chunk.pieces))]
    found = [s for s in found if not s.endswith((":", "："))]
    rules = [s for s in found if word_count(s) >= 3 and rule_sentences(s)]
    best = (rules or [s for s in found if word_count(s) >= 5] or [""])[0]
    if len(best) > _RULE_CHARS:
        best = best[:_RULE_CHARS].rsplit(" ", 1)[0] + " …"
    return best if not best or best.endswith((".", "!", "?", "…", "。", "！", "？")) else best + "."


def clean(text: str) -> str:
    """One line safe for a description: no `<` `>` (spec lint), no `---` (validator)."""
    text = " ".join(text.split()).replace("<", "‹").replace(">", "›")
    while "---" in text:
        text = text.replace("---", "—")
    return text


def _subject(chunk: Chunk) -> tuple[str, str]:
    """(the section's own heading, its parent heading or ""), as plain text without numbering."""
    heads = [_heading_text(h) for h in chunk.heading]
    if chunk.doc.root.level and heads:
        heads = heads[1:]
    if not heads:
        return chunk.doc.title, ""
    return heads[-1], heads[-2] if len(heads) > 1 else ""


def _sub_headings(chunk: Chunk) -> list[str]:
    """Titles of the headings inside the chunk below its own (the topics it also covers)."""
    own = {_heading_text(h) for h in chunk.heading}
    out: list[str] = []
    for piece in chunk.pieces:
        for line in chunk.text(piece).split("\n"):
            found = re.match(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if found:
                title = _heading_text(found.group(2))
                if title and title not in out and title not in own:
                    out.append(title)
    return out


def _heading_text(heading: str) -> str:
    """A heading as a description quotes it: plain text, no section number, no trailing ":"."""
    return strip_numbering(plain(heading, markers=False)).rstrip(": ").strip()


# A label line: a short title of its own ending in ":" ("Cabin:", "**Change flights:**"), which heads
# the block under it the way a sub-heading would.
_LABEL = re.compile(r"^\s{0,3}(?:\*\*|__)?([A-Z][^:.!?*_`\[\]|]{0,48}?)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*$")
_LABEL_WORDS = 5
# First words of a lead-in sentence ("If the trip involves:", "Note:"), not of a label.
_LEAD_WORDS = frozenset("if when where while the this these those here there it you we they for to in on as after before once unless otherwise note notes example examples important".split())


def section_labels(chunk: Chunk) -> list[str]:
    """Labels inside the chunk that head a block of their own ("Cabin:", "Change passengers:"), in
    order: a line that is only a title of at most five words ending in ":", followed by a list or
    indented text. A lead-in sentence ("The following expenses require receipts:", "Each
    reservation specifies the following:", "Note:") is not one: it starts with a lead word or
    holds an article."""
    out: list[str] = []
    for piece in chunk.pieces:
        lines = chunk.text(piece).split("\n")
        for i, line in enumerate(lines):
            found = _LABEL.match(line)
            if not found:
                continue
            label = plain(found.group(1), markers=False).strip()
            said = [w.lower() for w in label.split()]
            nxt = next((ln for ln in lines[i + 1 :] if ln.strip()), "")
            sentence = not said or said[0] in _LEAD_WORDS or bool(set(said) & _ARTICLES)
            heads_block = bool(_ITEM_START.match(nxt)) or nxt.startswith((" ", "\t"))
            if not sentence and len(said) <= _LABEL_WORDS and heads_block and label not in out:
                out.append(label)
    return out


# A capitalised word inside a sentence (after a lower-case word or a comma): a name ("in Concur").
_NAME_IN_SENTENCE = re.compile(r"(?<=[a-z,;] )([A-Z][a-z]+)")


def as_phrase(heading: str, prose: str) -> str:
    """`heading` as words inside a sentence: a capitalised word is lower-cased when the section's
    prose uses it in lower case, and the first word unless the prose writes it as a name
    ("Booking a Rental Car in Concur" → "booking a rental car in Concur"), so names and acronyms
    keep their capitals."""
    lower = {w for w in _WORD.findall(prose) if w.islower()}
    names = set(_NAME_IN_SENTENCE.findall(prose))

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        capitalised = word[:1].isupper() and word[1:].islower()
        # The first word is capitalised as any heading's is; it stays so only as a name.
        common = word.lower() in lower or (match.start() == 0 and word not in names)
        return word.lower() if capitalised and common else word

    return _WORD.sub(fix, heading)


def _when(heading: str, parent: str, prose: str) -> str:
    if heading.rstrip().endswith("?"):
        return f"Use when someone asks: {heading.rstrip()}"
    under = f" ({parent})" if parent else ""
    return f"Use when a task involves {as_phrase(heading, prose)}{under}."


def describe(chunk: Chunk, weights: TermWeights, continues: str | None = None) -> str:
    """The verbatim description of `chunk` (1 to MAX_DESCRIPTION characters, see the module docstring).

    Args:
        weights: the term weights of the chunk's document (`TermWeights.of(chunk.doc)`).
        continues: for a later part of a split section, the name of the skill with its first part.
    """
    title = plain(chunk.doc.title, markers=False)
    heading, parent = _subject(chunk)
    reference = chunk.kind != "general" and is_reference(chunk)
    subs = _sub_headings(chunk)
    subs += [label for label in section_labels(chunk) if label not in subs]
    # A reference section defines the data every procedure reads: its rule sentences and frequent
    # words are the domain's common vocabulary ("reservation", "cabin", "payment") and drew
    # procedure requests to it (7 of 15 airline misses), so it is named by what it defines.
    rule = "" if reference else leading_rule(chunk)
    said = set(tokens(" ".join((title, heading, parent, rule))))
    terms = [] if reference and subs else key_terms(chunk, weights, said)
    listed = f" Key terms: {', '.join(terms)}." if terms else ""
    if subs:
        listed = f" {'Defines' if reference else 'Covers'}: {'; '.join(subs)}." + listed
    part = f" (part {chunk.part} of {chunk.parts}, continues {continues})" if chunk.part > 1 and continues else (f" (part 1 of {chunk.parts})" if chunk.part == 1 else "")
    if chunk.kind == "general" and states_rules(chunk):
        text = f"General rules of {title}{part} that apply to every task under it: {rule}{listed} Use for any task under {title}."
    elif chunk.kind == "general":
        text = f"{title}{part}, the introduction: {rule}{listed} Use when a task involves {as_phrase(title, _prose(chunk))}."
    elif reference:
        text = f"Reference, not a procedure: {heading}{part} of {title}.{listed} Look up {as_phrase(heading, _prose(chunk))} here."
    else:
        where = title if title != heading else ""
        context = f", in {where}" if where else ""
        text = f"{heading}{part}{context}: {rule}{listed} {_when(heading, parent, _prose(chunk))}"
    text = clean(text.replace(" :", ":").replace(":  ", ": "))
    if len(text) > MAX_DESCRIPTION:
        text = text[: MAX_DESCRIPTION - 1].rsplit(" ", 1)[0] + "…"
    return text
