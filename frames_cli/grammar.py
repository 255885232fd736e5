"""What a proposed rule's grammar shows: values cut out, a story instead of a rule, a fragment.

Part-of-speech tags come from TextBlob's Pattern tagger (`textblob.en.tag`: a Brill-style lexicon
and context rules that ship inside the `textblob` package, MIT; no model is downloaded). The rules
below are grammar, not word lists: which tags can end a clause, which tense a rule is written in.
Measured on the labelled proposals of bench/data/guards/ (bench/guards.py;
docs/decisions/0072-guards-measured-on-real-text.md). Shared by the proposal guard
(evolution/propose/guards.py) and the simulator's world (sim/world.py), so that neither package
imports the other.
"""

from __future__ import annotations

import functools
import re

# Clause punctuation: what follows a word that ends a clause.
_CLAUSE_END = frozenset(".,;:!?)")
# Marks a cut value leaves that need no tagger: "between and", "from to", empty brackets or
# quotes, a currency sign with no amount, two clause marks in a row.
_MARKS = re.compile(
    r"\bbetween[ \t]+(?:and|or)\b|\bfrom[ \t]+(?:to|until)\b|\(\s*\)|\"\s*\"|[$€£](?![\d])|[,;:+&][ \t]*[.,;:!?]",
    re.IGNORECASE,
)
# Articles need their noun; forms of "be" need their complement unless a pronoun subject comes first
# ("leave it as it is"): both are closed grammatical classes, named here by their members.
_ARTICLES = frozenset({"a", "an", "the"})
_BE = frozenset({"is", "are"})


@functools.lru_cache(maxsize=4096)
def tagged(sentence: str) -> tuple[tuple[str, str], ...]:
    """(word, Penn Treebank tag) for every token of `sentence`, punctuation included.

    Imports textblob on first use (about 0.3 s with its lexicon); cached per sentence.
    """
    from textblob.en import tag

    return tuple((word, pos) for word, pos in tag(sentence, tokenize=True))


def _ends_clause(words: tuple[tuple[str, str], ...], i: int) -> bool:
    return i + 1 == len(words) or words[i + 1][0] in _CLAUSE_END


def cut_value(sentence: str) -> str | None:
    """The words of `sentence` that show its values were cut out, or None when it reads whole.

    A preposition (IN, TO) needs its object: one that ends a clause after other words lost it
    ("Agent assigns payment to."), unless a verb comes just before it, where English leaves the object
    elsewhere: a relative clause ("a cabin the user has just changed to"), coordinated verbs sharing one
    object ("paid with, or refunded to, one payment method"), an infinitive left implicit ("if the user wants
    to"). An article or a coordinating conjunction that ends a clause lost what followed it; so did "is"/"are"
    with no pronoun subject before it. Two prepositions joined by a conjunction share one object ("before or
    after the trip"); "between and" and "from to" are `_MARKS`, the marks of a cut that need no grammar.
    """
    mark = _MARKS.search(sentence)
    if mark is not None:
        return mark.group(0).strip()
    words = tagged(sentence)
    for i, (word, pos) in enumerate(words):
        before = words[i - 1][1] if i else ""
        lower = word.casefold()
        if not word.isalpha():
            continue  # the tagger reads a lone digit as a preposition ("in step 4")
        if pos in ("IN", "TO") and i and not before.startswith("VB") and _ends_clause(words, i):
            return " ".join(w for w, _ in words[i : i + 2])
        elif (pos == "CC" or lower in _ARTICLES) and _ends_clause(words, i) and i:
            return " ".join(w for w, _ in words[i : i + 2])
        elif lower in _BE and _ends_clause(words, i) and before not in ("PRP", "DT", "EX"):
            return " ".join(w for w, _ in words[i : i + 2])
    return None


def narrates(sentence: str) -> str | None:
    """The past-tense verb that makes `sentence` a story rather than a rule, or None.

    A rule is written in the present, with a modal or as an imperative ("must not be cancelled",
    "Decide …", "is taken from the profile"); a sentence whose finite verbs are all past (VBD, or a
    modal with "have" and a participle, "should have known") tells what happened in one case
    ("The traveler missed the flight because nothing was ticketed.", "Also, tone: the answer was
    curt."). A past verb inside a rule ("a reservation that was booked …") comes with a present
    or modal one, so the rule passes.
    """
    words = tagged(sentence)
    past: str | None = None
    for i, (word, pos) in enumerate(words):
        following = words[i + 1][0].casefold() if i + 1 < len(words) else ""
        if pos == "MD" and following == "have":
            past = past or f"{word} have"
        elif pos in ("VBZ", "VBP", "MD") or (pos == "VB" and _starts_clause(words, i)):
            return None
        elif pos == "VBD":
            past = past or word
    return past


def _starts_clause(words: tuple[tuple[str, str], ...], i: int) -> bool:
    """Whether token i opens a clause (an imperative's verb comes first, perhaps after an adverb)."""
    j = i - 1
    while j >= 0 and words[j][1] in ("RB", "CC"):
        j -= 1
    return j < 0 or words[j][0] in _CLAUSE_END


def fragment(text: str) -> str | None:
    """Why `text` is not whole sentences, or None: a sentence starts with a capital letter, a digit
    or an opening quote or bracket and ends with . ! or ? (perhaps inside a closing quote or
    bracket). "s signature, send it to …" lost its start; "while on personal travel is not" both
    ends."""
    stripped = text.strip()
    if not stripped:
        return "is empty"
    first = stripped[0]
    if first.isalpha() and not first.isupper():
        return f"starts in the middle of a sentence ({stripped.split()[0]!r})"
    if stripped.rstrip("\"')]*_")[-1:] not in (".", "!", "?"):
        return f"stops in the middle of a sentence ({stripped.split()[-1]!r})"
    return None


#: Tags of content words: nouns, verbs and adjectives (what a rule is about and what it asks).
_CONTENT = ("NN", "VB", "JJ")


def content_words(text: str) -> frozenset[str]:
    """The stemmed nouns, verbs and adjectives of `text` (`words.tokens` of each), the words
    that say what a rule is about; function words and adverbs ("every", "never", "instead") are
    not, whatever a stop-word list holds."""
    from frames_cli.words import tokens

    return frozenset(
        t for word, pos in tagged(text) if pos.startswith(_CONTENT) for t in tokens(word.replace("'", " "))
    )
