"""What a reviewer would fix in a description by hand: a word list, a cut word or sentence.

Issue 30 found both in verbatim descriptions ("Key terms: button, paid, anything, deleting, ...";
"...you may create an. Covers: ..."; "(this threshold is $25 for. Key terms ..."; a sentence cut at
"i.e."). `defects` names them; bench/descriptions.py counts them over policy folders and a test
reads every description coldstart writes for the 18F travel folder and the bundled policy.
"""

from __future__ import annotations

import re

#: Items in a row of one word each that make a word list ("reason, business, longer, mistake, acceptable").
WORD_LIST_ITEMS = 5
_ITEM = re.compile(r"^\s*(?:and\s+|or\s+)?([A-Za-z][\w'’&/-]*)\s*$")
# Words no sentence ends on: an article, a preposition or conjunction left hanging ("create an.").
_DANGLING = frozenset(
    (
        "a an the to for of and or with in on at by from as than into onto via per your my our their its this these "
        "that"
    ).split()
)
_SENTENCE_END = re.compile(r"([A-Za-z][\w'’-]*)([.!?])[\"'”’)]*(?=\s|$)")
_ABBREVIATION_END = re.compile(r"\b(?:i\.e|e\.g|vs|cf)\.(?=\s+[A-Z]|$)")
_PAIRS = (("(", ")"), ("[", "]"), ("“", "”"))


def _word_list(text: str) -> bool:
    """A run of WORD_LIST_ITEMS or more comma- or semicolon-separated items of one word each."""
    run = 0
    for item in re.split(r"[,;:]", text):
        run = run + 1 if _ITEM.match(item.strip().rstrip(".!?")) else 0
        if run >= WORD_LIST_ITEMS:
            return True
    return False


def defects(text: str) -> list[str]:
    """What is wrong with a description as a reviewer reads it (empty when nothing is):

    - "word list": a "Key terms:" list, or a run of WORD_LIST_ITEMS one-word items;
    - "cut word": a sentence cut short, as `cut_word` finds it.
    """
    found = []
    if "key terms" in text.lower() or _word_list(text):
        found.append("word list")
    if cut_word(text):
        found.append("cut word")
    return found


def cut_word(text: str) -> str | None:
    """Where `text` is cut short, in words a writer can act on, or None when it is not: a sentence
    ending on an article, preposition or conjunction ('"create an." ends on "an"'), a sentence cut
    after "i.e."/"e.g.", an ellipsis, brackets or quotes left open, or no end punctuation."""
    for m in _SENTENCE_END.finditer(text):
        if m.group(1).lower() in _DANGLING:
            start = text.rfind(" ", 0, max(m.start(), 1) - 1) + 1
            return f'"{text[start:m.end()].strip()}" ends on "{m.group(1)}"'
    if found := _ABBREVIATION_END.search(text):
        return f'a sentence ends at "{found.group(0)}"'
    if "…" in text or "..." in text:
        return "it holds an ellipsis"
    for a, b in _PAIRS:
        if text.count(a) != text.count(b):
            return f"“{a}” is not closed" if text.count(a) > text.count(b) else f"“{b}” closes nothing"
    if text.count('"') % 2 == 1:
        return "a quotation is not closed"
    if not text.rstrip("\"'”’)").endswith((".", "!", "?", "。", "！", "？")):
        return "the last sentence has no end punctuation"
    return None
