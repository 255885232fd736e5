"""Verbatim descriptions: what a skill does and when to use
it, in one or two plain sentences of its section's own words.

A description says where the section sits (its parent heading, or its document's title) unless the
skill's name says it, the section's heading as written when the name does not already say it (a
question always: "Which receipts must I keep?"), the one sentence of the section that best says
what it decides (`quoting.ranked`), and what else it covers (its sub-headings and the labels that
head a block, "Change cabin:"), within `AIM` characters and never over `LIMIT`: a catalog line is sent
with every executor call, so each word must help an agent pick the skill. Nothing is cut: a
sentence or a topic that does not fit is left out whole (a sentence may lose its asides in
parentheses). A preamble that states rules for the sections after it says it applies to every
task; a reference section (definitions, scope, roles, the domain's basics) says it is reference
and what it defines. Only the document's own text counts, so adding another document never
changes a description. `Description.sources` says what it was made from, down to the line of the
sentence quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from frames_cli.coldstart.naming import strip_numbering, words
from frames_cli.coldstart.quoting import Candidate, TermWeights, ranked
from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.markup import plain
from frames_cli.words import rule_sentences
from frames_cli.tokens import approx_tokens

#: Characters a verbatim description aims to stay within (the catalog's cost, issue 30) and
#: never exceeds (unless its heading alone does).
AIM, LIMIT = 220, 250
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]")
_ARTICLES = frozenset({"a", "an", "the"})
# Heading words of boilerplate and reference sections; a heading made only of these (and at least
# one of `_REFERENCE_CORE`) is reference, not procedure.
_REFERENCE_CORE = frozenset(
    "definitions definition glossary terms terminology acronyms abbreviations scope purpose objective objectives roles "
    "responsibilities responsibility artifacts artefacts references history applicability authority ownership owner "
    "approval approvals control domain basic basics background concepts entities".split()
)
_REFERENCE_WORDS = _REFERENCE_CORE | frozenset(
    "and of key the policy document documents related revision version change record records".split()
)
# Parent headings that place nothing ("Frequently Asked Questions"): the one above them is used.
_PLACELESS = frozenset(
    {
        "faq", "faqs", "frequently asked questions", "questions", "overview", "introduction", "general", "other",
        "miscellaneous",
    }
)
# A heading that introduces the steps of a task the skills after it detail ("Brief overview of vouchers").
_OVERVIEW = re.compile(r"^(?:brief |short )?(?:overview of|introduction to)\s", re.IGNORECASE)


def is_reference(chunk: Chunk) -> bool:
    """True when the chunk's heading names boilerplate or reference matter (definitions, scope,
    purpose, roles and responsibilities, artifacts, references, revision history, ...)."""
    if not chunk.heading or chunk.kind == "general":
        return False
    found = [w.lower() for w in _WORD.findall(strip_numbering(plain(chunk.heading[-1], markers=False)))]
    return bool(found) and set(found) <= _REFERENCE_WORDS and bool(set(found) & _REFERENCE_CORE)


def states_rules(chunk: Chunk) -> bool:
    """True when the chunk's text states at least one rule (must, only, never, required, ...)."""
    return any(rule_sentences(s.text) for s in chunk.sentences())


def general_rules(chunk: Chunk) -> bool:
    """True for a preamble that states rules for the tasks of the sections after it: it states a
    rule and is at most half of its document's text. A preamble that is most of its document (18F's
    "Get set up to travel before onboarding": the procedure, then one question) is that
    document's own procedure, not rules for every task."""
    if chunk.kind != "general" or not states_rules(chunk):
        return False
    whole = approx_tokens("\n".join(line for line in chunk.doc.view if line.strip()))
    return 2 * chunk.tokens <= whole


def clean(text: str) -> str:
    """One line safe for a description: no `<` `>` (spec lint), no `---` (validator)."""
    text = " ".join(text.split()).replace("<", "‹").replace(">", "›")
    while "---" in text:
        text = text.replace("---", "—")
    return text


def _heading_text(heading: str) -> str:
    """A heading as a description quotes it: plain text, no section number, no trailing ":"."""
    return strip_numbering(plain(heading, markers=False)).rstrip(": ").strip()


def _subject(chunk: Chunk) -> tuple[str, str]:
    """(the section's own heading, where it sits: its nearest parent heading that places it, else
    its document's title; "" when that is the heading itself)."""
    heads = [_heading_text(h) for h in chunk.heading]
    if chunk.doc.root.level and heads:
        heads = heads[1:]
    title = _heading_text(chunk.doc.title)
    if not heads:
        return title, ""
    above = [h for h in heads[:-1] if h.lower().rstrip("?") not in _PLACELESS]
    place = above[-1] if above else title
    return heads[-1], "" if place.lower() == heads[-1].lower() else place


def _sub_headings(chunk: Chunk) -> list[tuple[str, int]]:
    """(title, file line) of the headings inside the chunk below its own (the topics it also
    covers), asides left out."""
    own = {_heading_text(h) for h in chunk.heading}
    out: list[tuple[str, int]] = []
    for piece in chunk.pieces:
        if piece in chunk.asides:
            continue
        for no in range(piece.start, piece.end + 1):
            found = re.match(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", chunk.doc.view[no - 1])
            if found and no not in chunk.doc.fenced:
                title = _heading_text(found.group(2))
                if title and title not in own and title not in [t for t, _ in out]:
                    out.append((title, no))
    return out


# A label line: a short title of its own ending in ":" ("Cabin:", "**Change flights:**"), which heads
# the block under it the way a sub-heading would.
_LABEL = re.compile(r"^\s{0,3}(?:\*\*|__)?([A-Z][^:.!?*_`\[\]|]{0,48}?)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*$")
_LABEL_WORDS = 5
_ITEM_START = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
# First words of a lead-in sentence ("If the trip involves:", "Note:"), not of a label.
_LEAD_WORDS = frozenset(
    (
        "if when where while the this these those here there it you we they for to in on as after before once unless "
        "otherwise note notes example examples important"
    ).split()
)


def section_labels(chunk: Chunk) -> list[tuple[str, int]]:
    """(label, file line) of the labels inside the chunk that head a block of their own ("Cabin:",
    "Change passengers:"), in order: a line that is only a title of at most five words ending in
    ":", followed by a list or indented text. A lead-in sentence ("The following expenses require
    receipts:", "Each reservation specifies the following:", "Note:") is not one: it starts with a
    lead word or holds an article."""
    out: list[tuple[str, int]] = []
    for piece in chunk.pieces:
        lines = chunk.doc.view[piece.start - 1 : piece.end]
        for i, line in enumerate(lines):
            found = _LABEL.match(line)
            if not found:
                continue
            label = plain(found.group(1), markers=False).strip()
            said = [w.lower() for w in label.split()]
            nxt = next((ln for ln in lines[i + 1 :] if ln.strip()), "")
            sentence = not said or said[0] in _LEAD_WORDS or bool(set(said) & _ARTICLES)
            heads_block = bool(_ITEM_START.match(nxt)) or nxt.startswith((" ", "\t"))
            if not sentence and len(said) <= _LABEL_WORDS and heads_block and label not in [t for t, _ in out]:
                out.append((label, piece.start + i))
    return out


# A list item that is only a link ("- [GSA Telework and Remote Work Policy](https://...)").
_LINK_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[([^\]\[]+)\]\([^)\s]+\)[\s.;,]*$")


def _linked_documents(chunk: Chunk) -> list[str]:
    """The link texts of the asides that are lists of links (18F's "Policy links": "GSA Telework
    and Remote Work Policy"), addresses left out: joined to this skill for lack of a rule, they are
    still what an agent looking for that document must find in the catalog."""
    out: list[str] = []
    for piece in chunk.asides:
        view = chunk.doc.view[piece.start - 1 : piece.end]
        lines = [ln for ln in view if ln.strip() and not ln.lstrip().startswith("#")]
        found = [m.group(1).strip() for ln in lines if (m := _LINK_ITEM.match(ln))]
        if found and len(found) == len(lines):
            out += [t for t in found if "@" not in t and "://" not in t and t not in out]
    return out


def _pick(candidates: list[Candidate], room: int) -> tuple[Candidate, str] | None:
    """The best candidate with a form within `room` characters, with that form; None when none fits."""
    return next(((c, quoted) for c in candidates if (quoted := c.fit(room))), None)


def _mostly_named(heading: str, name: str | None) -> bool:
    """True when the skill's name holds at least half of the heading's words (`naming.words`)."""
    said = words(heading)
    return bool(said) and 2 * len(set(said) & set((name or "").split("-"))) >= len(set(said))


def _room(*parts: str) -> int:
    """Characters left under LIMIT after `parts` and a space after each."""
    return LIMIT - sum(len(p) + 1 for p in parts if p)


def _topic(title: str) -> str:
    """A sub-heading as a topic: its first sentence when it has two ("I received a bill for an
    outstanding balance on my travel card. Should I pay it?" → its first)."""
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z])", title, maxsplit=1)[0]
    return first.rstrip(".") if first != title else title


def _topics(names: list[str], room: int) -> str:
    """"Covers: A; B; C." with as many whole topics as fit in `room` characters, "" for none;
    the ones left out are counted ("and 2 more")."""
    names = [_topic(n) for n in names]
    for k in range(len(names), 0, -1):
        rest = len(names) - k
        text = f"Covers: {'; '.join(names[:k])}{f'; and {rest} more' if rest else ''}"
        text += "" if text.endswith(("?", "!", ".")) else "."
        if len(text) <= room:
            return text
    return ""


@dataclass(frozen=True)
class Description:
    """A verbatim description and what it was made from.

    Attributes:
        text: one or two sentences, at most `LIMIT` characters unless the heading alone is longer.
        sources: "heading", "sub-headings" and the quoted sentence as `file#Lline`, in that order.
    """

    text: str
    sources: list[str] = field(default_factory=list)


def describe(chunk: Chunk, weights: TermWeights, continues: str | None = None, name: str | None = None) -> Description:
    """The verbatim description of `chunk` (see the module docstring).

    Args:
        weights: the term weights of the chunk's document (`TermWeights.of(chunk.doc)`).
        continues: for a later part of a split section, the name of the skill with its first part.
        name: the skill's name; a heading made of its words is not said again.
    """
    title = _heading_text(chunk.doc.title)
    heading, place = _subject(chunk)
    reference = chunk.kind != "general" and is_reference(chunk)
    found = _sub_headings(chunk)
    found += [(label, no) for label, no in section_labels(chunk) if label not in [t for t, _ in found]]
    linked = [t for t in _linked_documents(chunk) if t not in [t for t, _ in found]]
    topics = [t for t, _ in found] + linked
    part = (
        f" (part {chunk.part} of {chunk.parts}{f', continues {continues}' if continues else ''})" if chunk.part else ""
    )
    if reference:
        # A reference section defines the data every procedure reads: its sentences are the
        # domain's common vocabulary and drew procedure requests to it (issue 13: 7 of 15
        # airline misses), so it is described by what it defines.
        head = f"{heading}{part} ({title}), reference, not a procedure."
        covered = _topics(topics, LIMIT - len(head) - 1).replace("Covers:", "Defines:", 1)
        return Description(clean(f"{head} {covered}"), ["heading"] + (["sub-headings"] if covered else []))
    if chunk.kind == "general":
        place, lead = (
            "", f"General rules of {title}{part} for every task:" if general_rules(chunk) else f"{title}{part}:",
        )
    else:
        # The name already says a heading made of its words ("Changes in tax" → changes-in-tax);
        # a question ("Which receipts must I keep?") or a heading the name shortens is said, an
        # overview too: "Brief overview of finalizing approvals" tells an agent asking what
        # steps come after booking that this skill orders them, finalizing-approvals does not.
        named = set(words(heading)) <= set((name or "").split("-")) and not heading.endswith("?")
        named = named and not _OVERVIEW.match(heading)
        lead = f"{heading}{part}" if not named or part else ""
        lead += "" if not lead or lead.endswith(("?", "!")) else ":"
    # With two topics or more, a sentence from inside one of them would stand for the whole: only
    # the section's own opening, before its first topic, is quoted.
    candidates = ranked(
        chunk, weights, min(no for _, no in found) if len(found) > 1 else None, rules=general_rules(chunk)
    )
    if len(topics) > 1:
        # Two topics or more say more than one sentence: they are fitted first (within AIM, or
        # LIMIT when no sentence of the section's opening is quoted).
        covered = _topics(topics, AIM - len(lead) - 1)
        first = _pick(candidates, _room(lead, covered) - (LIMIT - AIM))
        covered = covered if first else _topics(topics, _room(lead))
    else:
        first = _pick(candidates, _room(lead))
        if first is None and lead and not part and _mostly_named(heading, name):
            # A long heading the name mostly says ("Note about travel to a training, conference,
            # speaking event, large team IRL, or international" for
            # travel-to-training-conference-speaking-event) left no room for any sentence: the
            # section's own rule says more than the heading's other words.
            lead = ""
            first = _pick(candidates, _room(lead))
        covered = _topics(topics, _room(lead, first[1] if first else ""))
    quoted = first[1] if first else ""
    # Where it sits is said when the name does not say it already ("Get access to Concur" for
    # get-access-to-concur-faq) and it fits.
    place = "" if set(words(place)) <= set((name or "").split("-")) else place
    where = (
        f"{place}:"
        if place
        and len(" ".join(p for p in (place, lead, quoted, covered) if p)) + 2 <= (AIM if quoted or covered else LIMIT)
        else ""
    )
    sources = ["heading"] if lead else []
    sources += ["sub-headings"] if covered and found else []
    sources += ["links"] if covered and linked else []
    sources += [f"{chunk.doc.file}#L{first[0].sentence.line}"] if first else []
    if not quoted and not covered:
        # Nothing to quote and no topics: the heading and where it sits say it all.
        lead = (lead or f"{heading}{part}").rstrip(":")
        return Description(
            clean(" ".join(p for p in (where, lead + ("" if lead.endswith(("?", "!", ".")) else ".")) if p)),
            ["heading"],
        )
    text = " ".join(p for p in (where, lead, quoted, covered) if p)
    return Description(clean(text.replace(": Covers:", ". Covers:")), sources)
