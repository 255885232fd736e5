"""Values that belong to a case rather than to a rule: ids, amounts, dates and times, person names.

Shared by the case-value guard (evolution/guards.py) and the simulator (sim/), so that neither
package imports the other. See docs/DECISIONS.md (2026-12-01, guards) for what counts as a value.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable, Iterator

if TYPE_CHECKING:
    from frames_cli.formats.case import Case

# A value token: letters, digits and the joiners ids, dates and amounts use inside them
# ("H8Q05L", "emma_kim_9957", "2024-05-17", "$1,380.00"); trailing punctuation is not part of it.
TOKEN = re.compile(r"[$€£]?[A-Za-z0-9](?:[A-Za-z0-9_,.\-/:]*[A-Za-z0-9])?")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NAME_KEY = re.compile(r"(^|_)name$")
_NAME_WORD = re.compile(r"[A-Z][a-z]+")
#: Whole numbers below this, written without a currency sign, are counts ("2 bags", "5 passengers"),
#: which rules state all the time; larger numbers and any amount with a sign are case values.
SMALL_COUNT = 100


def value_of(token: str) -> str | None:
    """The normalised value of one `TOKEN` match, or None when it is an ordinary word or a count.

    Values: tokens mixing letters and digits (ids, flight numbers), dates and times, amounts (with a
    currency sign, a decimal part, or ≥ SMALL_COUNT), and all-capital words of five or more letters
    (reservation ids without a digit). Case-folded, so "h8q05l" and "H8Q05L" are one value;
    "$1,380.00" and "1380" are one value too.
    """
    signed = token[0] in "$€£"
    bare = token.lstrip("$€£")
    if not any(ch.isdigit() for ch in bare):
        return bare.casefold() if len(bare) >= 5 and bare.isalpha() and bare.isupper() else None
    plain = bare.replace(",", "")
    if _NUMBER.fullmatch(plain):
        number = float(plain)
        if not signed and "." not in plain and number < SMALL_COUNT:
            return None
        return f"{number:g}" if number != int(number) else str(int(number))
    return bare.casefold()


def values_in(text: str) -> set[str]:
    """The normalised values (see `value_of`) that `text` carries."""
    return {v for v in (value_of(t) for t in TOKEN.findall(text)) if v is not None}


def name_words(text: str) -> set[str]:
    """Capitalised words of `text` ("Emma", "Kim"): how person names are compared."""
    return set(_NAME_WORD.findall(text))


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
    """(values, person names) that `case`'s record holds (`case_texts`). Names are the capitalised
    words of `*name` fields."""
    values: set[str] = set()
    names: set[str] = set()
    for key, text in case_texts(case):
        values |= values_in(text)
        if _NAME_KEY.search(key):
            names |= name_words(text)
    return values, names


def policy_values(texts: Iterable[str]) -> set[str]:
    """Values and capitalised words that the policy texts state: rule values, never a case's."""
    out: set[str] = set()
    for text in texts:
        out |= values_in(text) | name_words(text)
    return out


def without_values(text: str, drop: set[str], names: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """`text` without the tokens whose value is in `drop` or that are one of `names`, spaces tidied.

    "Agent does not cancel H8Q05L." with H8Q05L dropped → "Agent does not cancel." (the sentence as
    a rule, with the case's facts left out).
    """
    def keep(match: re.Match[str]) -> str:
        token = match.group(0)
        value = value_of(token)
        return "" if (value is not None and value in drop) or token in names else token

    stripped = re.sub(r"\(\s*\)", "", TOKEN.sub(keep, text))
    stripped = re.sub(r"[ \t]{2,}", " ", stripped)
    return re.sub(r"[ \t]+([.,;:!?)])", r"\1", stripped).strip()
