"""When two rule texts state the same rule, or contradict each other: word overlap, numbers, polarity.

Consensus groups the diagnosers' proposals with these tests, and the rewrite guard uses them to
refuse a skill that states one rule twice. Both are plain text comparisons, measured against the
real-model trial's proposals (docs/decisions/0036-one-rule-one-line.md); no model is called.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from frames_cli.words import token_set

_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "single": "1", "twice": "2", "half": "0.5",
}
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)*\b|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
# A case's own values: codes that mix letters and digits (reservation PEP4E0, order W4284542) or
# upper-case codes of five letters or more (IFOYYZ).
_IDENTIFIER = re.compile(r"\b(?=[A-Za-z0-9_]*[A-Za-z])(?=[A-Za-z0-9_]*\d)[A-Za-z0-9_]{4,}\b|\b[A-Z]{5,}\b")
# Words that turn a rule into its refusal. Stop-word removal drops "not" and "no", so polarity is
# read from the raw words. "deny"/"refuse" count: "otherwise refuse" and "otherwise do not cancel"
# are the same polarity, and the trial's diagnosers use both.
_NEGATION = re.compile(
    r"\b(?:not|never|no|cannot|can't|don't|doesn't|mustn't|won't|nor|deny|denied|refuse|refused|reject|decline)\b",
    re.IGNORECASE,
)


def similarity(a: str, b: str) -> float:
    """Jaccard similarity (0–1) of the two texts' stemmed content words (`words.token_set`).

    Two empty texts are identical (1.0) only when they are equal strings; otherwise 0.0.
    """
    ta, tb = token_set(a), token_set(b)
    if not ta or not tb:
        return 1.0 if a.strip() == b.strip() else 0.0
    return len(ta & tb) / len(ta | tb)


def numbers(text: str) -> frozenset[str]:
    """Numbers the text states, digits and number words alike ("three" and "3" are both "3")."""
    return frozenset(_NUMBER_WORDS.get(m.lower(), m.replace(",", "")) for m in _NUMBER.findall(text))


def numbers_conflict(a: str, b: str) -> bool:
    """True when each text states a number the other lacks ("1 free bag" vs "2 free bags").

    One text adding a number the other omits ("within 24 hours" against no time at all) is more
    detail, not a different rule.
    """
    na, nb = numbers(a), numbers(b)
    return bool(na - nb) and bool(nb - na)


def identifiers(text: str) -> frozenset[str]:
    """Codes the text names (reservation and order ids and the like), upper-cased."""
    return frozenset(m.upper() for m in _IDENTIFIER.findall(text))


def different_subjects(a: str, b: str) -> bool:
    """True when each text names a code the other does not ("do not cancel PEP4E0" / "… IFOYYZ"):
    however alike the words, they are about different things and never one rule."""
    ia, ib = identifiers(a), identifiers(b)
    return bool(ia - ib) and bool(ib - ia)


def negated(text: str) -> bool:
    """True when the text refuses or forbids (any negation word)."""
    return _NEGATION.search(text) is not None


#: Two wordings contradict each other only when they are at least this similar: "X" against "do
#: not X" share nearly every word, while two loosely alike wordings of one rule ("decide from the
#: record" / "take the cabin from the record, not from what the user says, and deny") differ in
#: negation words without disagreeing (measured on the trial's proposals, docs/decisions/0036-one-rule-one-line.md).
CONTRADICTION_SIMILARITY = 0.5


def contradiction(a: str, b: str) -> str | None:
    """Why two wordings of one rule contradict each other, or None when they agree.

    Only wordings with `similarity` ≥ CONTRADICTION_SIMILARITY can contradict each other.

    Returns:
        "different numbers (…)" or "one forbids what the other asks".
    """
    if similarity(a, b) < CONTRADICTION_SIMILARITY:
        return None
    if numbers_conflict(a, b):
        return f"different numbers ({', '.join(sorted(numbers(a)))} against {', '.join(sorted(numbers(b)))})"
    if negated(a) != negated(b):
        return "one forbids what the other asks"
    return None


#: Fewest content words two lines must share to state one rule. Every rule the real-model trial's
#: rewriter wrote twice shared 9 to 19 content words with its repeat; short lines that share 4 or
#: 5 ("Agent does not cancel reservation A since …" / "… B since …") reach any Jaccard threshold
#: by chance and are different rules more often than not.
MIN_SHARED_WORDS = 6


@dataclass(frozen=True)
class RuleFeatures:
    """What `same_rule` compares of one text, computed once: its content `words` (`token_set`),
    `numbers`, `codes` (`identifiers`) and whether it is `negated`."""

    words: frozenset[str]
    numbers: frozenset[str]
    codes: frozenset[str]
    negated: bool

    @classmethod
    def of(cls, text: str) -> RuleFeatures:
        """The features of `text`."""
        return cls(token_set(text), numbers(text), identifiers(text), negated(text))

    def same_rule(self, other: RuleFeatures, threshold: float) -> bool:
        """`same_rule` of the two texts these features are of."""
        shared = len(self.words & other.words)
        if shared < MIN_SHARED_WORDS or (bool(self.codes - other.codes) and bool(other.codes - self.codes)):
            return False
        if shared / (len(self.words) + len(other.words) - shared) < threshold:
            return False
        conflict = bool(self.numbers - other.numbers) and bool(other.numbers - self.numbers)
        return not conflict and self.negated == other.negated


def same_rule(a: str, b: str, threshold: float) -> bool:
    """True when two lines state one rule twice: `similarity` ≥ `threshold`, at least
    MIN_SHARED_WORDS content words in common, no number conflict and the same polarity.

    Lines that differ only in a number ("1 free checked bag …" / "2 free checked bags …", as in a
    policy's tables) are different rules, however many words they share; so are a rule and its
    refusal ("cancel …" / "do not cancel …"), which is a contradiction, not a repetition; and so
    are lines naming `different_subjects`.
    """
    return RuleFeatures.of(a).same_rule(RuleFeatures.of(b), threshold)


def group(texts: Sequence[str], voters: Sequence[int], threshold: float) -> list[list[int]]:
    """Group texts that state the same rule: average-linkage clustering with a cannot-link rule.

    Two groups merge when the mean pairwise `similarity` of their members is ≥ `threshold`, most
    similar pair first. Members of one group never share a voter: one diagnoser listing two
    changes means they are two rules to it; nor do they name `different_subjects`. Identical
    texts (whitespace aside) are merged first whoever proposed them.

    Args:
        texts: rule texts (see `diagnose.Proposal.rule_text`).
        voters: per text, the diagnoser that proposed it.
        threshold: 0 < threshold ≤ 1.

    Returns:
        Groups as lists of indexes into `texts`, each sorted; groups ordered by their first index.
    """
    if len(texts) != len(voters):
        raise ValueError("one voter per text")
    groups = _identical(texts)
    sim = [[similarity(a, b) for b in texts] for a in texts]

    apart = [[different_subjects(a, b) for b in texts] for a in texts]

    def linkage(g: list[int], h: list[int]) -> float:
        if any(apart[i][j] for i in g for j in h):
            return -1.0
        return sum(sim[i][j] for i in g for j in h) / (len(g) * len(h))

    while (pair := _closest(groups, voters, linkage, threshold)) is not None:
        x, y = pair
        groups[x] = sorted(groups[x] + groups[y])
        del groups[y]
    return sorted(groups, key=lambda g: g[0])


def _identical(texts: Sequence[str]) -> list[list[int]]:
    """Indexes of `texts` grouped by text (white space and case aside), groups in order of first index."""
    groups: list[list[int]] = []
    by_text: dict[str, int] = {}
    for i, text in enumerate(texts):
        key = " ".join(text.split()).casefold()
        if key in by_text:
            groups[by_text[key]].append(i)
        else:
            by_text[key] = len(groups)
            groups.append([i])
    return groups


def _closest(
    groups: list[list[int]], voters: Sequence[int], linkage: Callable[[list[int], list[int]], float], threshold: float
) -> tuple[int, int] | None:
    """The two groups of the highest linkage ≥ `threshold` (the first such pair on a tie) that share no
    voter; None when no pair may merge."""
    best: tuple[float, int, int] | None = None
    for x in range(len(groups)):
        vx = {voters[i] for i in groups[x]}
        for y in range(x + 1, len(groups)):
            if vx & {voters[i] for i in groups[y]}:
                continue
            score = linkage(groups[x], groups[y])
            if score >= threshold and (best is None or score > best[0]):
                best = (score, x, y)
    return None if best is None else (best[1], best[2])


def medoid(texts: Sequence[str], members: Sequence[int]) -> int:
    """The member whose wording is closest on average to the others (ties: the shortest, then first).

    This is the group's representative wording: the one that says what most of them say.
    """
    def key(i: int) -> tuple[float, int, int]:
        others = [similarity(texts[i], texts[j]) for j in members if j != i]
        return (-(sum(others) / len(others)) if others else 0.0, len(texts[i]), i)

    return min(members, key=key)


@dataclass(frozen=True)
class DuplicatePair:
    """A sentence of a skill body that states a rule an earlier sentence already states (1-based
    body line of each; one line may hold both). `first` is the earliest sentence it repeats,
    `second` the repeat; list markers stripped."""

    first_line: int
    second_line: int
    first: str
    second: str


# A sentence ends at . ! or ? followed by a capital, a quote or a bracket: "e.g. the" and "$1.50"
# do not end one, and a semicolon's clauses stay one rule.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def rule_sentences(line: str) -> list[str]:
    """The sentences of one body line (blockquote marks, list marker and task box stripped), in order."""
    text = re.sub(r"^(?:>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?", "", line.strip())
    return [part for part in _SENTENCE_BREAK.split(text) if part]


def sentence_key(text: str) -> str:
    """A sentence as `duplicate_pairs` compares it with the policy's (`policy_sentences`): emphasis
    marks and closing punctuation left out, lower case, one space between words."""
    return " ".join(re.sub(r"[*_`]", "", text).lower().split()).rstrip(".!?;:, ")


#: Earlier sentences `duplicate_pairs` compares one sentence with at most (those sharing its rarest
#: words, earliest first). Real skill bodies give a sentence a few candidates; the bound keeps a
#: hostile body (thousands of near-alike lines, each a different rule) from costing n² comparisons.
MAX_CANDIDATES = 200


def _body_sentences(body: str) -> list[tuple[int, str]]:
    """(1-based line, sentence) of every rule sentence of a Markdown body: text lines, list markers
    stripped; headings, HTML comments, table rows and code fences are not rules."""
    found: list[tuple[int, str]] = []
    in_code = False
    for number, raw in enumerate(body.split("\n"), 1):
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line or line.startswith(("#", "<!--", "|")):
            continue
        found += [(number, text) for text in rule_sentences(line)]
    return found


def duplicate_pairs(
    body: str, threshold: float, policy: Mapping[str, frozenset[str]] | None = None, *, limit: int | None = None
) -> list[DuplicatePair]:
    """Each rule sentence of a Markdown body that repeats an earlier one (`same_rule`), with the earliest it repeats.

    The unit is the sentence, not the line: a line that adds a new rule after restating an old one
    ("Check that the agent does not change the cabin of one flight only. The agent must not ...")
    repeats one sentence, and only that sentence should go. Rule text is every non-empty text line
    (list markers stripped); headings, HTML comments, table rows and code fences are not rules.
    Two different sentences that one section of the policy holds side by side (`policy`, from
    `policy_sentences.policy_sections`) are two of its rules, however alike ("If the price ... is
    higher ..., the user is required to pay for the difference." / "... is lower ..., the user ...
    should be refunded the difference."); one policy sentence written twice, or a rule the policy
    restates in another section, is still a repeat. A rule stated three times gives two repeats.

    Near-linear, not a comparison of every pair: two sentences stating one rule share at least
    max(MIN_SHARED_WORDS, ⌈threshold · size⌉) of each one's content words, so they share one of
    each one's rarest size − that + 1 words (prefix filtering: Bayardo, Ma and Srikant 2007, "Scaling
    up all pairs similarity search", WWW; Xiao et al. 2008, PPJoin). A sentence is compared only
    with earlier ones sharing such a word and of a size a Jaccard of `threshold` allows, at most
    MAX_CANDIDATES of them.

    Args:
        limit: stop after this many repeats (a caller comparing counts needs no more).

    Returns:
        One DuplicatePair per repeating sentence, in body order.
    """
    policy = policy or {}
    sentences = [(n, t, RuleFeatures.of(t)) for n, t in _body_sentences(body)]
    sentences = [s for s in sentences if len(s[2].words) >= MIN_SHARED_WORDS]
    frequency = Counter(w for _n, _t, f in sentences for w in f.words)
    index: dict[str, list[int]] = defaultdict(list)
    keys: dict[int, str] = {}

    def side_by_side(i: int, j: int) -> bool:
        ka, kb = (keys.setdefault(k, sentence_key(sentences[k][1])) for k in (i, j))
        return ka != kb and bool(policy.get(ka, frozenset()) & policy.get(kb, frozenset()))

    out: list[DuplicatePair] = []
    for i, (line, text, features) in enumerate(sentences):
        size = len(features.words)
        need = max(MIN_SHARED_WORDS, math.ceil(threshold * size - 1e-9))
        prefix = sorted(features.words, key=lambda w: (frequency[w], w))[: size - need + 1]
        sharing = heapq.merge(*(index[key] for w in prefix for key in _probe_keys(w, features.numbers)))
        j = _repeated(i, features, sharing, sentences, threshold, side_by_side)
        if j is not None:
            out.append(DuplicatePair(sentences[j][0], line, sentences[j][1], text))
        if limit is not None and len(out) >= limit:
            break
        for w in prefix:
            for key in _index_keys(w, features.numbers):
                index[key].append(i)
    return out


def _repeated(
    i: int, features: RuleFeatures, sharing: Iterable[int], sentences: list[tuple[int, str, RuleFeatures]],
    threshold: float, side_by_side: Callable[[int, int], bool],
) -> int | None:
    """The earlier sentence whose rule sentence `i` (of `features`) repeats: the first of those `sharing` a
    prefix word (ascending, each once) whose size a Jaccard of `threshold` allows, at most MAX_CANDIDATES
    of them; None."""
    size = len(features.words)
    compared, last = 0, -1
    for j in sharing:
        if j == last:
            continue
        last = j
        other = sentences[j][2]
        if not threshold * size <= len(other.words) <= size / threshold:
            continue
        compared += 1
        if other.same_rule(features, threshold) and not side_by_side(j, i):
            return j
        if compared >= MAX_CANDIDATES:
            return None
    return None


#: A sentence stating more numbers than this is indexed where every sentence looks (see `_index_keys`).
_MAX_NUMBER_KEYS = 8


def _index_keys(word: str, numbers: frozenset[str]) -> list[str]:
    """Where `duplicate_pairs` files a sentence under one of its prefix words: with no numbers, where
    every later sentence looks; with numbers, under each number (a later sentence stating some of
    them looks there) and under "any number" (a later sentence stating none looks there). Two
    sentences each stating a number the other lacks are different rules, so a fee table's rows
    (one amount each) never meet."""
    if not numbers or len(numbers) > _MAX_NUMBER_KEYS:
        return [word]
    return [f"{word}\0*"] + [f"{word}\0{n}" for n in numbers]


def _probe_keys(word: str, numbers: frozenset[str]) -> list[str]:
    """Where `duplicate_pairs` looks for earlier sentences that may state the rule of a sentence
    with `numbers` (the counterpart of `_index_keys`)."""
    return [word] + ([f"{word}\0{n}" for n in numbers] if numbers else [f"{word}\0*"])
