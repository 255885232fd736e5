"""Skill names from heading paths: short, from the business process, valid under the Agent Skills
spec, unique, and stable across runs.

A name is the heading's words (section numbers, question leads such as "How do I" and articles left
out, non-Latin script transliterated by `anyascii`): all of them when they fit the spec's
MAX_NAME, else the first clause when that fits, else at most `SOFT_NAME` characters, cut only
between words and never after a dangling "and"/"of"/"other". A heading that says nothing alone
("Questions", "Overview") takes its parent's words. Two sections that would share a name take
their parent headings, then the document title, then the file's path (two documents with one
title), then the section's two most frequent words (two sections of one file with one heading
path); a numeric suffix is the last resort, for sections that say the same.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from anyascii import anyascii

from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.markup import plain
from frames_cli.formats.skill import MAX_NAME
from frames_cli.words import CJK, STOPWORDS

#: Preferred longest name (characters); the spec allows MAX_NAME.
SOFT_NAME = 48
_WORD = re.compile(r"[a-z0-9]+")
_CJK_RUN = re.compile(rf"[{CJK}]+")
# Section numbers ("2.1.1", "1\\.", "IV.", "A)", "Section 4:", "Appendix
# B -", "第一章") say where a heading sits, not what it is about.
_NUMBERING = re.compile(
    r"^\s*(?:"
    r"第[0-9〇零一二三四五六七八九十百千]+[章节節条條款编編篇部]\s*"
    r"|(?:appendix|annex|attachment|exhibit)\s+(?:[A-Z]|[0-9]+)\b\s*(?:[-–—:.)]\s*)?"
    r"|(?:(?:section|article|chapter|part|step|§)\s*[0-9]+(?:\.[0-9]+)*[.:)]?"
    r"|\d+(?:\.\d+)+\\?\.?|\d+\\?[.)]|[IVXLC]+\\?[.)]|[A-Z]\\?[.)])\s+"
    r")(?=\S)",
    re.IGNORECASE,
)
_QUESTION = frozenset("how what when where which who why can could should do does did is are will may".split())
_LEAD = _QUESTION | frozenset("i we you if to my am our happens".split())
_WH = frozenset("how what when where which who why".split())
_AUX = frozenset("must should do does can could will would may shall".split())
_PRONOUNS = frozenset("i we you".split())
# Openings that say what kind of text follows, not what it is about.
_GENERIC_LEADS = [
    lead.split()
    for lead in (
        "brief overview of", "overview of", "introduction to", "note about", "notes on", "questions about",
        "information about", "guide to",
    )
]
# Possessives as a heading writes them in lower case: "Change your Slack location"; "Know Your
# Customer" keeps its capitalised one, a name.
_POSSESSIVE = re.compile(r"\b(?:my|your|our|their)\b")
_ARTICLES = frozenset({"a", "an", "the"})
_PLURAL = re.compile(r"(?<=([A-Za-z]))\((s|es)\)")
_AMPERSAND = re.compile(r"(?<=[a-z])&(?=[a-z])")
# "Meals and Incidental Expenses (M&IE)": an abbreviation in parentheses spelled by the initials
# of the words before it repeats them; the name keeps the words.
_ABBREVIATION = re.compile(r"\s*\(([A-Z][A-Z&/.]{1,7})\)")
_JOINERS = frozenset("and of for the in on to &".split())
# A name must not end on a word that needs the words cut after it.
_RULE_WORDS = frozenset("must never always only should shall cannot".split())
_DANGLING = frozenset(
    "a an the and or of to for from in on at by with but than other as into about is are my your our their if".split()
)
# Headings that name no process on their own.
_GENERIC = frozenset(
    {
        "questions", "question", "faq", "faqs", "frequently-asked-questions", "overview", "introduction",
        "intro", "general", "policy", "title", "section", "summary", "background", "notes", "note",
        "other", "miscellaneous", "misc", "details", "information", "more-information",
        "additional-information", "resources", "contacts", "contact", "next-steps", "examples",
        "instructions", "procedure", "procedures", "process", "requirements", "rules", "guidance",
    }
)


def strip_numbering(title: str) -> str:
    """`title` without a leading section number ("2.1 Income" → "Income", "1\\. Effective date" →
    "Effective date", "第一条 总则" → "总则")."""
    return _NUMBERING.sub("", title)


def words(title: str) -> list[str]:
    """The words a name is made of: numbering, markup, question leads, articles and lower-case
    possessives ("your", "my") and openings such as "Brief overview of" left out, transliterated to
    ASCII lowercase. A question reads as its task: "Which receipts must I keep?" → keep receipts,
    "Who is my authorizing official and what is my budget?" → authorizing official and budget;
    "Frequently asked questions" → faq."""
    text = _CJK_RUN.sub(_transliterate_run, plain(strip_numbering(title), markers=False))
    text = _POSSESSIVE.sub(" ", _drop_abbreviation(anyascii(text)))
    # "Form(s)" reads "forms", "Tax(es)" "taxes", "Certificates(s)" stays "certificates"; "M&IE" is one word.
    text = (
        _PLURAL.sub(lambda m: "" if m.group(2) == "s" and m.group(1).lower() == "s" else m.group(2), text).lower()
        .replace("'", "")
    )
    found = _WORD.findall(_AMPERSAND.sub("", text))
    clauses: list[list[str]] = [[]]
    for i, w in enumerate(found):
        # "... and what is my budget": a second question joined by "and" is a clause of its own.
        if w == "and" and i + 1 < len(found) and found[i + 1] in _QUESTION and clauses[-1]:
            clauses.append([])
        else:
            clauses[-1].append(w)
    found = [w for k, clause in enumerate(clauses) for w in ([] if k == 0 else ["and"]) + _as_task(clause)]
    for i in range(len(found) - 2):
        if found[i : i + 3] == ["frequently", "asked", "questions"]:
            found[i : i + 3] = ["faq"]
            break
    # "Brief overview of vouchers", "Questions about entering expenses": the lead names no task.
    for lead in _GENERIC_LEADS:
        if found[: len(lead)] == lead and len(found) > len(lead):
            found = found[len(lead) :]
            break
    kept = [w for w in found if w not in _ARTICLES]
    return kept or found


def _as_task(found: list[str]) -> list[str]:
    """One clause's words without its question lead ("how should i claim" → claim), the object
    asked about after the verb ("receipts must i keep" → keep receipts)."""
    if not found or found[0] not in _QUESTION:
        return found
    rest = found[1:]
    # A second question word starts the subject ("What if who is traveling changes?").
    while len(rest) > 1 and rest[0] in _LEAD and rest[0] not in _WH:
        rest.pop(0)
    # "Which receipts must I keep?": a short object, then the verb after "must I".
    for k in range(1, min(len(rest) - 2, 4)):
        if rest[k] in _AUX and rest[k + 1] in _PRONOUNS:
            return rest[k + 2 :] + rest[:k]
    return rest or found


def _drop_abbreviation(text: str) -> str:
    """`text` without a parenthesised abbreviation whose letters are the initials of the words
    just before it ("Meals and Incidental Expenses (M&IE)" → "Meals and Incidental Expenses")."""

    def repl(match: re.Match[str]) -> str:
        letters = [c for c in match.group(1) if c.isalpha()]
        before = [w for w in re.findall(r"[A-Za-z]+", text[: match.start()]) if w.lower() not in _JOINERS]
        initials = [w[0].upper() for w in before[-len(letters) :]]
        return "" if len(before) >= len(letters) and initials == letters else match.group(0)

    return _ABBREVIATION.sub(repl, text)


def _transliterate_run(match: re.Match[str]) -> str:
    """A run of CJK characters as one word of syllables ("总则" → "zongze"); a run too long for a
    name as words of two characters each, so a name is cut between syllables, never inside one."""
    run = match.group(0)
    if len(anyascii(run)) <= SOFT_NAME:
        return f" {anyascii(run)} "
    return " " + " ".join(anyascii(run[i : i + 2]) for i in range(0, len(run), 2)) + " "


def join(parts: list[str], limit: int = SOFT_NAME) -> str:
    """Words as a name of at most `limit` characters, cut between words, no dangling last word;
    "" when there are no words."""
    out: list[str] = []
    for w in parts:
        if len("-".join(out + [w])) > limit:
            if not out:
                out = [w[:limit]]
            break
        out.append(w)
    while len(out) > 1 and out[-1] in _DANGLING:
        out.pop()
    return "-".join(out)


def slug(text: str, limit: int = MAX_NAME) -> str:
    """`text` as a spec-valid name (see `words` and `join`); "section" when nothing is left."""
    return join(words(text), limit) or "section"


# Where a heading's first clause ends: ", but", ";", a spaced dash, a colon or a question mark
# followed by more text. A plain comma is not one: it mostly separates a list's items.
_CLAUSE_END = re.compile(r",\s+but\b|;|\s[-–—]\s|[:?]\s")


def heading_words(title: str) -> list[str]:
    """The words of `title` a name keeps (see `words`): all of them when they fit MAX_NAME, else
    its first clause when that fits ("Changes made before going to the airport or train station,
    but after the flight has been ticketed" → changes-made-before-going-to-airport-or-train-station),
    else all of them for `join` to cut between words. So a heading that fits is never cut
    mid-phrase ("...-from-location-other-than-home", not "...-from-location")."""
    found = words(title)
    if len("-".join(found)) <= MAX_NAME:
        return found
    first = words(_CLAUSE_END.split(strip_numbering(title), 1)[0])
    return first if first and len("-".join(first)) <= MAX_NAME else found


def _heads(chunk: Chunk) -> list[list[str]]:
    """Words of each heading of the chunk's path, document title first; a general chunk has the title only."""
    titles = (chunk.doc.title,) if chunk.kind == "general" or not chunk.heading else chunk.heading
    if chunk.doc.root.level == 0 and chunk.kind != "general" and chunk.heading:
        titles = (chunk.doc.title, *titles)
    return [w for w in (heading_words(t) for t in titles) if w]


def part_lead(chunk: Chunk, base: list[str]) -> list[str]:
    """Words that name a continuation part: its two most frequent content words (four letters or
    more, not in `base`), in the order the part first uses them."""
    text = plain(" ".join(chunk.text(p) for p in chunk.pieces))
    found = [
        w for w in words(text) if len(w) >= 4 and w not in STOPWORDS and w not in _DANGLING and w not in _RULE_WORDS
        and w not in base and not w.isdigit()
    ]
    counts: dict[str, int] = {}
    for w in found:
        counts[w] = counts.get(w, 0) + 1
    top = sorted(counts, key=lambda w: -counts[w])[:2]
    return [w for w in counts if w in top]


def candidates(chunk: Chunk) -> list[str]:
    """Names for `chunk`, most preferred first: its heading, then with one more parent heading at
    a time, then with the document title; a generic heading ("Questions") always has a parent's words."""
    heads = _heads(chunk) or [["section"]]
    last = heads[-1]
    out: list[str] = []
    for k in range(1, len(heads) + 1):
        above = _prefix(heads[-k:-1], last)
        if k == 1 and "-".join(last) in _GENERIC and len(heads) > 1:
            continue
        base = above + last
        if chunk.part > 1:
            base = base + part_lead(chunk, base)
        # The heading alone is kept whole when it fits the spec; only a longer one is cut short.
        name = join(base, MAX_NAME if k > 1 or len("-".join(base)) <= MAX_NAME else SOFT_NAME)
        if name and name not in out:
            out.append(name)
    title = words(chunk.doc.title)
    if title and title != heads[0]:
        name = join(_prefix([title, *heads[-2:-1]], last), MAX_NAME)
        if name not in out:
            out.append(name)
    # Documents with the same title (two "Travel Policy" files) differ by their file.
    name = join(file_words(chunk.doc.file) + last, MAX_NAME)
    if name not in out:
        out.append(name)
    # Two sections of one file with the same heading path differ by what they say.
    name = join(last + part_lead(chunk, last), MAX_NAME)
    if name not in out:
        out.append(name)
    return out or ["section"]


def _prefix(parents: list[list[str]], last: list[str]) -> list[str]:
    """The parent headings' words put before `last`: whole when the name then fits MAX_NAME, else
    each parent's first three words without a dangling last word, so "Get access to Concur" >
    "Frequently asked questions" is get-access-to-concur-..., never get-access-to-frequently-...
    (which says something else)."""
    whole = [w for h in parents for w in h]
    if len("-".join(whole + last)) <= MAX_NAME:
        return whole
    out: list[str] = []
    for h in parents:
        cut = h[:3]
        while len(cut) > 1 and cut[-1] in _DANGLING:
            cut = cut[:-1]
        out += cut
    return out


def file_words(file: str) -> list[str]:
    """The words of a policy file's path below `policies/`, suffix left out, every word kept
    ("policies/eu/agency-a.md" → ["eu", "agency", "a"]): what tells apart two documents that share
    their title."""
    path = PurePosixPath(file)
    parts = path.parts[1:-1] if path.parts[:1] == ("policies",) else path.parts[:-1]
    return _WORD.findall(anyascii(" ".join((*parts, path.stem))).lower())


def assign_names(
    chunks: list[Chunk], fixed: dict[int, str] | None = None, reserved: frozenset[str] = frozenset()
) -> list[str]:
    """One unique name per chunk, in the same order.

    Args:
        fixed: chunk index → the name it keeps (an existing skill of the same file and heading path).
        reserved: names no other chunk may take (skills on disk that belong to other sections).

    Every other chunk starts at its first candidate; all chunks sharing a name move on to their
    next candidate together (so neither keeps the short name by accident of order); when candidates
    run out, a numeric suffix in document order settles it. The result depends only on the chunks
    and the names kept.
    """
    fixed = fixed or {}
    taken = set(reserved) | set(fixed.values())
    options = [[n for n in candidates(c) if n not in taken] or [candidates(c)[-1]] for c in chunks]
    free = [i for i in range(len(chunks)) if i not in fixed]
    level = dict.fromkeys(free, 0)
    while True:
        names = {i: options[i][min(level[i], len(options[i]) - 1)] for i in free}
        seen: dict[str, list[int]] = {}
        for i, name in names.items():
            seen.setdefault(name, []).append(i)
        movable = [i for idx in seen.values() if len(idx) > 1 for i in idx if level[i] < len(options[i]) - 1]
        if not movable:
            break
        for i in movable:
            level[i] += 1
    used = set(taken)
    out = []
    for i in range(len(chunks)):
        if i in fixed:
            out.append(fixed[i])
            continue
        final, n = names[i], 2
        while final in used:
            tail = f"-{n}"
            final = join(names[i].split("-"), MAX_NAME - len(tail)) + tail
            n += 1
        used.add(final)
        out.append(final)
    return out
