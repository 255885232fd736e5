"""How the local checks read text: case, spaces, and amounts written with thousands separators or currency signs.

A grader must be no stricter than the source whose cases it grades (DESIGN §11): τ²'s communicate
check looks for a required figure in the agent's message with its commas removed
(`evaluator_communicate.py`: ``info.lower() in message.content.lower().replace(",", "")``), so an
agent that writes "5,244" or "$5,244.00" tells the customer 5244. Here every number in a text is
rewritten to one canonical form before comparing:

- ``5,244`` / ``$5,244.00`` / ``5244`` / ``€ 5244.0`` → ``5244``; ``46.660`` → ``46.66``;
- commas count as thousands separators only in groups of three digits (``52,44`` stays as it is,
  so it never reads as 5244), and a number with a leading zero (``02134``, a zip or a code) is
  left as written;
- a required number matches only a whole number of the text (``5244`` is not in ``15244`` nor in
  ``5244.5``): here frames is stricter than τ²'s substring test on purpose, because a figure that
  differs is a wrong answer (docs/decisions/0069-grading-no-stricter-than-source.md).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_CURRENCY = "$€£¥"
# A number not glued to a word or to another number: 5,244.00 (thousands in groups of three) or 5244.5.
_NUMBER = re.compile(
    rf"(?<![\w.,])(?:[{_CURRENCY}]\s?)?(?P<num>(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?)(?![\w]|[.,]\d)"
)
_WHOLE_AMOUNT = re.compile(rf"\s*(?:[{_CURRENCY}]\s?)?((?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?)\s*")
# Commas between words (not inside a number such as 52,44): τ² removes them from the message.
_TEXT_COMMA = re.compile(r"(?<!\d),|,(?!\d)")


def _canonical_number(digits: str) -> str | None:
    """``5,244.00`` → ``5244``; None for a code with a leading zero (``02134``), kept as written."""
    plain = digits.replace(",", "")
    if len(plain) > 1 and plain[0] == "0" and plain[1] != ".":
        return None
    try:
        value = Decimal(plain)
    except InvalidOperation:  # the pattern admits only digits, commas and one point; kept for safety
        return None
    text = format(value.normalize(), "f")
    return text


def canonical(text: str, *, fold: bool = True, commas: bool = False) -> str:
    """`text` with every number in canonical form (currency sign and thousands separators dropped,
    trailing decimal zeros cut), whitespace collapsed, case-folded unless `fold` is False, and
    commas between words removed when `commas` (τ²'s communicate check)."""

    def number(m: re.Match[str]) -> str:
        form = _canonical_number(m.group("num"))
        return m.group(0) if form is None else form

    out = _NUMBER.sub(number, text)
    if commas:
        out = _TEXT_COMMA.sub("", out)
    out = " ".join(out.split())
    return out.casefold() if fold else out


def amount(text: str) -> float | None:
    """The value of a string that is one number and nothing else ("5,244", "$5,244.00", " 12.5 "),
    else None ("52,44", "5244 USD", "abc")."""
    m = _WHOLE_AMOUNT.fullmatch(text)
    if not m:
        return None
    form = _canonical_number(m.group(1))
    return float(form) if form is not None else None


def holds(haystack: str, needle: str, *, fold: bool = True, commas: bool = False) -> bool:
    """Whether `needle` occurs in `haystack`, both read by `canonical`; a needle that starts or ends
    with a digit must not continue a longer number of the haystack there."""
    want = canonical(needle, fold=fold, commas=commas)
    if not want:
        return True
    have = canonical(haystack, fold=fold, commas=commas)
    pattern = re.escape(want)
    if want[0].isdigit():
        pattern = r"(?<![\d.])" + pattern
    if want[-1].isdigit():
        pattern += r"(?!\d|\.\d)"
    return re.search(pattern, have) is not None
