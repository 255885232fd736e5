"""A reviewer's comment as sentences: links reduced to their words, bullets and verdict words cut, quotes kept whole.

The answer key of a rejected row is made of whole sentences the reviewer wrote (`ingest.keys.answer_key`),
so the comment is first cut where a reader would cut it:

- Markdown links ``[words](target)`` keep their words, never the target; ``<https://…>`` and bare
  URLs are dropped, with the brackets that held only them (a link target is not a requirement,
  and policy anchors read as debris);
- a sentence ends at ``.``, ``!``, ``?`` (or 。！？) followed by a space, at a line break and before
  a list item (``- ``, ``* ``, ``1. ``, ``2) ``); not after an abbreviation ("Mr.", "e.g.") nor
  inside a double-quoted span, so a quoted rule stays in its sentence;
- a single quote is never a quotation mark here: "AO's", "don't" and 'nothing can be done' are
  words of the sentence;
- a leading verdict word ("Wrong.", "Nope,", "Falsch." …) is not part of any sentence.

`wrong_claims` finds the agent's wrong answers the reviewer quotes, which a right answer must not repeat.
"""

from __future__ import annotations

import re

_MD_LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_ANGLE_URL = re.compile(r"<(?:https?|ftp|mailto):[^>\s]*>")
_BARE_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>()\"]+")
_EMPTY_BRACKETS = re.compile(r"[ \t]*(?:\(\s*\)|\[\s*\])")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+")
_ABBREVIATIONS = frozenset(
    (
        "mr mrs ms dr st jr sr prof e.g i.e etc vs approx no nr art sec fig ca cf incl resp z.b bzw usw sra sr srta "
        "dña mme mlle"
    ).split()
)
# Verdict words a reviewer puts before the point ("Wrong.", "Nope, …", "Wrong — …"), in the languages
# the verdict column knows and a few more; never part of the key.
VERDICT_WORDS = (
    "wrong|no|nope|nah|incorrect|not correct|not right|rejected|reject|false|bad|fail|failed|not quite|"
    "falsch|nein|inkorrekt|incorrecto|incorrecta|falso|non|faux|incorrect"
)
_VERDICT_ONLY = re.compile(rf"^\W*(?:{VERDICT_WORDS})\W*$", re.IGNORECASE)
_VERDICT_LEAD = re.compile(rf"^(?:{VERDICT_WORDS})\s*(?:[,.;:!—–]|\s-\s)\s*(?=\S)", re.IGNORECASE)
_END = "。！？"
_QUOTES = "\"“”„«»"


def strip_links(text: str) -> tuple[str, int]:
    """(`text` with each Markdown link reduced to its words and URLs removed, how many links there were)."""
    count = 0

    def words(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        inner = m.group(1).strip()
        return "" if _BARE_URL.fullmatch(inner) else inner

    out = _MD_LINK.sub(words, text)
    out, n_angle = _ANGLE_URL.subn("", out)
    out, n_bare = _BARE_URL.subn("", out)
    if n_angle or n_bare:
        # "… on the form (https://…)." would keep "()" in the key: brackets that held only a URL go with it.
        out = _EMPTY_BRACKETS.sub("", out)
    return out, count + n_angle + n_bare


def _abbreviation_before(text: str, dot: int) -> bool:
    """Whether the ``.`` at `dot` closes an abbreviation or an initial ("Mr.", "e.g.", "J.")."""
    start = dot
    while start > 0 and (text[start - 1].isalpha() or text[start - 1] == "."):
        start -= 1
    word = text[start:dot].casefold()
    if word == "no":  # "No. 5" is a number; "No. The limit is …" is a verdict
        return bool(re.match(r"\s*\d", text[dot + 1:]))
    return word in _ABBREVIATIONS or (len(word) == 1 and text[start].isupper())


def _split_line(line: str) -> list[str]:
    """One line cut into sentences (rules in the module docstring)."""
    out: list[str] = []
    start, inside = 0, False
    i = 0
    while i < len(line):
        ch = line[i]
        if ch in _QUOTES:
            inside = not inside if ch == '"' else ch in "“„«"
        elif ch in ".!?" + _END and not inside:
            end = i + 1
            while end < len(line) and line[end] in ".!?" + _QUOTES + ")":
                end += 1
            if ch == "." and _abbreviation_before(line, i) and end < len(line):
                i += 1
                continue
            if end >= len(line) or line[end].isspace() or ch in _END:
                out.append(line[start:end])
                start = end
                i = end
                continue
        elif ch in ".!?" and inside and i + 1 < len(line) and line[i + 1] in _QUOTES:
            # A sentence that ends inside its quote ('… personal travel."'): the quote closes it.
            end = i + 2
            inside = False
            if end >= len(line) or line[end].isspace():
                out.append(line[start:end])
                start = end
                i = end
                continue
        i += 1
    out.append(line[start:])
    return out


def split_sentences(text: str) -> list[str]:
    """`text` (links already stripped) as whole sentences and list items, each stripped, in order;
    a list item loses its bullet."""
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line)
        for part in _split_line(line):
            part = " ".join(part.split())
            if part.strip(" .,;:-—–"):
                out.append(part)
    return out


def drop_verdict(sentence: str) -> str:
    """`sentence` without a leading verdict word ("Nope, PMI is …" → "PMI is …"); "" when it is
    only a verdict ("Wrong.")."""
    if _VERDICT_ONLY.match(sentence):
        return ""
    return _VERDICT_LEAD.sub("", sentence, count=1)


#: The agent as a reviewer names it, with its article if any ("the agent", "Bot", "el agente").
#: "it" is not here: "It's 12 weeks paid" is a rule; "Instead it told her …" is a story by its past verb.
AGENT = r"(?:the |our |this |that |la |el |le |der |die |l')?(?:agent(?:e)?|bot|chatbot|assistant|model|ai)"
# A double-quoted span of three or more words that the reviewer says the agent wrote, or calls false.
_QUOTE_SPAN = re.compile(r"[\"“]([^\"”]+)[\"”]")
_SAID_BEFORE = re.compile(
    rf"{AGENT}\s+(?:\w+ly\s+)?(?:wrote|said|says|told \w+|replied|answered|claimed|claims|stated|promised|offered|"
    r"invented)\s*:?\s*$",
    re.IGNORECASE,
)
_FALSE_AFTER = re.compile(
    r"^[\s,.;:)—–-]*(?:which|that|this)?\s*(?:is|was|are|were)\s+(?:false|wrong|incorrect|not true|untrue|a mistake|"
    r"inaccurate|misleading)\b",
    re.IGNORECASE,
)


def wrong_claims(comment: str) -> list[str]:
    """The agent's wrong answers `comment` quotes in double quotes: after "the agent wrote/said", or
    followed by "which is false/wrong" (single quotes are apostrophes here, never quotation marks)."""
    out = []
    for m in _QUOTE_SPAN.finditer(comment):
        quote = " ".join(m.group(1).split())
        if len(quote.split()) >= 3 and (
            _SAID_BEFORE.search(comment[: m.start()]) or _FALSE_AFTER.match(comment[m.end() :])
        ):
            out.append(quote)
    return out
