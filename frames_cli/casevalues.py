"""Values that belong to a case rather than to a rule: ids, amounts, dates and times, names and places.

Shared by the case-value guard (evolution/propose/case_index.py) and the simulator (sim/), so that neither
package imports the other. What counts as a value: docs/decisions/0025-guards-on-proposals-and-rewrites.md
and 0049-case-values-stubs-list-items.md.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from frames_cli.formats.case import Case

# A value token: letters, digits and the joiners ids, dates and amounts use inside them
# ("H8Q05L", "emma_kim_9957", "2024-05-17", "$1,380.00"); trailing punctuation is not part of it.
TOKEN = re.compile(r"[$€£]?[A-Za-z0-9](?:[A-Za-z0-9_,.\-/:]*[A-Za-z0-9])?")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# A count with its unit written on ("24h", "2pcs", "50kg"): as much a rule value as "24 hours".
_COUNT_UNIT = re.compile(r"(\d+)(?:h|hrs?|d|min|pcs|kg|lbs?)", re.IGNORECASE)
_NAME_KEY = re.compile(r"(^|_)name$")
_NAME_WORD = re.compile(r"[A-Z][a-z]+")
#: A proper noun as a case's record writes it: a capitalised word ("Dallas", "LaGuardia") or a code
#: in capitals ("JFK", "TX").
_PROPER = re.compile(r"[A-Z][A-Za-z]+")
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|"
    r"Nov(?:ember)?|Dec(?:ember)?)"
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
#: A date or a clock time written out ("May 17", "17th of May, 2024", "3:30 pm"): several tokens
#: that are one value. Month names must be capitalised ("you may 5 ..." is no date).
PHRASE = re.compile(
    rf"\b(?:(?P<m1>{_MONTH})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?!\d)(?:,?\s+\d{{4}}\b)?"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH})\b(?:,?\s+\d{{4}}\b)?"
    r"|(?P<h>\d{1,2})(?::(?P<mi>\d{2}))?\s*(?P<ap>[ap])\.?m\b\.?)",
    re.IGNORECASE,
)
_ISO_DATE = re.compile(r"\b\d{4}-(\d{2})-(\d{2})\b")
#: Whole numbers below this, written without a currency sign, are counts ("2 bags", "5 passengers"),
#: which rules state all the time; larger numbers and any amount with a sign are case values.
SMALL_COUNT = 100
#: A field value of at most this many words is a name, a place or a code, not prose.
SHORT_FIELD_WORDS = 4


def value_of(token: str) -> str | None:
    """The normalised value of one `TOKEN` match, or None when it is an ordinary word or a count.

    Values: tokens mixing letters and digits (ids, flight numbers), dates and times, amounts (with a
    currency sign, a decimal part, or ≥ SMALL_COUNT; a count with its unit, "24h", is a count), and all-capital words
    of five or more letters (reservation ids without a digit). Case-folded, so "h8q05l" and "H8Q05L" are one value;
    "$1,380.00" and "1380" are one value too.
    """
    signed = token[0] in "$€£"
    bare = token.lstrip("$€£")
    if not any(ch.isdigit() for ch in bare):
        return bare.casefold() if len(bare) >= 5 and bare.isalpha() and bare.isupper() else None
    plain = bare.replace(",", "")
    unit = _COUNT_UNIT.fullmatch(plain)
    if unit is not None and not signed:
        plain = unit.group(1)
    if _NUMBER.fullmatch(plain):
        number = float(plain)
        if not signed and "." not in plain and number < SMALL_COUNT:
            return None
        return f"{number:g}" if number != int(number) else str(int(number))
    return bare.casefold()


def phrase_value(match: re.Match[str]) -> str | None:
    """The normalised value of one `PHRASE` match: "date 05-17" (month-day; the year is left out, as
    a written date often omits it) or "time 15:30"; None for a month that is not capitalised."""
    month = match.group("m1") or match.group("m2")
    if month is not None:
        if not month[0].isupper():
            return None
        return f"date {_MONTHS.index(month[:3].casefold()) + 1:02d}-{int(match.group('d1') or match.group('d2')):02d}"
    hour = int(match.group("h")) % 12 + (12 if match.group("ap").casefold() == "p" else 0)
    return f"time {hour:02d}:{match.group('mi') or '00'}"


def phrases(text: str) -> list[tuple[re.Match[str], str]]:
    """The written-out dates and times of `text` with their values (see `phrase_value`), in order."""
    return [(m, v) for m in PHRASE.finditer(text) if (v := phrase_value(m)) is not None]


def values_in(text: str) -> set[str]:
    """The normalised values that `text` carries: its tokens' (`value_of`), its written-out dates and
    times (`phrase_value`), and the month-day of each ISO date ("2024-05-17" also holds "May 17")."""
    out = {v for v in (value_of(t) for t in TOKEN.findall(text)) if v is not None}
    out |= {v for _, v in phrases(text)}
    return out | {f"date {m}-{d}" for m, d in _ISO_DATE.findall(text)}


def name_words(text: str) -> set[str]:
    """Capitalised words of `text` ("Emma", "Kim"): how person names are compared."""
    return set(_NAME_WORD.findall(text))


@functools.lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    """The lower-case entries of Webster's Second International (the `english-words` package's
    `web2` list, about 235,000 words): words a dictionary writes in lower case, so common words,
    not names. Read once, on first use (about 0.1 s)."""
    from english_words import get_english_words_set

    return frozenset(w for w in get_english_words_set(["web2"], lower=False) if w.islower())


def common_word(word: str) -> bool:
    """Whether a capitalised word of free text is a common English word written with a capital
    ("New", "DOB": the dictionary has "new", "dob"), not a name ("Philadelphia", "LaGuardia").
    A word the dictionary writes only with a capital ("English", "Boston") counts as a name."""
    return word.casefold() in _common_words()


def proper_nouns(text: str, *, anywhere: bool = False) -> set[str]:
    """Names in `text`: runs of capitalised words and capital codes that are whole tokens ("Dallas",
    "JFK"; not the "HAT" of "HAT090"), except a sentence's or a line's first word (capitalised
    whatever it is) unless `anywhere` (a record's short field value, where every capital is meant).

    Consecutive capitalised words (one space apart) are one name ("New York", "Raj Sanchez"), which
    a text carries when it holds the whole run; each word of the run that is not a common word is a
    name alone too ("Sanchez"). A single capitalised word of free text that is a common word
    (`common_word`: "New", "DOB") is no name.
    """
    out: set[str] = set()
    run: list[str] = []

    def close() -> None:
        if len(run) > 1:
            out.add(" ".join(run))
            out.update(w for w in run if not common_word(w))  # "Vegas" of "Las Vegas" names it alone
        elif run and (anywhere or not common_word(run[0])):
            out.add(run[0])
        run.clear()

    end = 0  # where the text before the current token was last read up to
    starts = True
    for match in TOKEN.finditer(text):
        gap = text[end : match.start()]
        if gap.strip(" \t\"'([*-+"):
            starts = gap.rstrip(" \t\"'([*-+")[-1:] in ".!?:;" or "\n" in gap
        elif "\n" in gap:
            starts = True
        word = match.group(0)
        proper = _PROPER.fullmatch(word) is not None and (anywhere or not starts)
        if not (proper and run and gap in (" ", "\t")):
            close()
        if proper:
            run.append(word)
        starts, end = False, match.end()
    close()
    return out


def _strings(obj: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(key, string) for every scalar leaf of a JSON-like value; numbers become strings."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, str(k))
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v, key)
    elif isinstance(obj, bool) or obj is None:
        return
    else:
        yield key, str(obj)


def case_texts(case: Case) -> list[tuple[str, str]]:
    """(key, string) of every text a case's record holds: its input text and fields, its expected
    answer and its diagnosis record (the texts `case_values` reads)."""
    d = case.diagnosis
    return list(_strings([case.task.input, case.task.expected, d.symptom, d.cause, d.notes, list(d.evidence)]))


def case_values(case: Case) -> tuple[set[str], set[str]]:
    """(values, proper nouns) that `case`'s record holds: its input text and fields, its expected
    answer and its diagnosis record.

    Proper nouns are the names and places of the case, read from its own record rather than from a
    list: the capitalised words of `*name` fields; the capitalised words and capital codes of every
    other field value that starts with a capital ("San Antonio", "JFK", "TX"); and, in free text
    (the request, the evidence), capitalised words that do not start a sentence ("from Philadelphia
    to LaGuardia"). Words the policy also uses (in any case) are rule words: see `is_rule_word`.
    """
    d = case.diagnosis
    values: set[str] = set()
    names: set[str] = set()
    for key, text in _strings([case.task.input, case.task.expected]):
        values |= values_in(text)
        if _NAME_KEY.search(key):
            names |= name_words(text)
        else:
            # A short field value ("San Antonio", "JFK") is a name or a code when it is capitalised;
            # longer text is prose, whose sentences start with a capital whatever they say.
            short = len(text.split()) <= SHORT_FIELD_WORDS and text[:1].isupper()
            names |= proper_nouns(text, anywhere=short)
    for _, text in _strings([d.symptom, d.cause, d.notes, list(d.evidence)]):
        values |= values_in(text)
        names |= proper_nouns(text)
    return values, names


def policy_values(texts: Iterable[str]) -> set[str]:
    """Values the policy texts state and every word they use, case-folded: rule values and rule
    words, never a case's ("Gold" is a membership level when the policy says "gold")."""
    out: set[str] = set()
    for text in texts:
        out |= values_in(text) | {w.casefold() for w in TOKEN.findall(text)}
    return out


def is_rule_word(word: str, policy: set[str] | frozenset[str]) -> bool:
    """Whether a proper noun of a case is a word the policy uses (`policy_values`): then it is no
    case value ("Silver", "Economy"); a run of words when the policy uses each ("Basic Economy")."""
    return all(w.casefold() in policy for w in word.split())


def name_phrases(names: Iterable[str]) -> list[str]:
    """The names of several words ("New York") among `names`, longest first."""
    return sorted((n for n in names if " " in n), key=len, reverse=True)


def without_values(text: str, drop: set[str], names: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """`text` without its written-out dates and times and its tokens whose value is in `drop`, and
    without every run of capitalised words that holds one of `names` ("New York" when "York" is a
    name), spaces tidied.

    "Agent does not cancel H8Q05L." with H8Q05L dropped → "Agent does not cancel." (the sentence as
    a rule, with the case's facts left out).
    """
    def keep(match: re.Match[str]) -> str:
        token = match.group(0)
        value = value_of(token)
        return "" if (value is not None and value in drop) or token in names else token

    runs = name_phrases(names)

    def keep_run(match: re.Match[str]) -> str:
        run = match.group(0)
        return "" if any(word in names for word in run.split()) or any(p in run for p in runs) else run

    text = PHRASE.sub(lambda m: "" if phrase_value(m) in drop else m.group(0), text)
    text = re.sub(r"\b[A-Z][A-Za-z]+(?:[ \t]+[A-Z][A-Za-z]+)+\b", keep_run, text)
    stripped = re.sub(r"\(\s*\)", "", TOKEN.sub(keep, text))
    stripped = re.sub(r"[ \t]{2,}", " ", stripped)
    return re.sub(r"[ \t]+([.,;:!?)])", r"\1", stripped).strip()


def holds_value(text: str, drop: set[str] | frozenset[str], names: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether `text` carries one of the values `drop` (normalised, as `values_in` gives them) or one
    of the proper nouns `names`: what `without_values` would cut out of it."""
    if any(phrase_value(m) in drop for m in PHRASE.finditer(text)) or any(p in text for p in name_phrases(names)):
        return True
    return any((v := value_of(tok)) is not None and v in drop or tok in names for tok in TOKEN.findall(text))
