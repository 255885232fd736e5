"""The simulator's sense of text: what skills tell the agent about a case, and skill relevance."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

from frames_cli.casevalues import values_in
from frames_cli.words import sentences, tokens

#: An evidence sentence counts as present when one sentence of the skill text holds at least this
#: share of its distinct content words (stop words dropped, crude stems): 0.7 tolerates a rewriter's
#: rewording of a few words but not a different rule that shares the topic.
FOUND_THRESHOLD = 0.7


# Skills and evidence recur across thousands of calls of a run; tokenising them once keeps the
# simulator's share of a call's cost small.
_CACHED = 4096


@functools.lru_cache(maxsize=_CACHED)
def _token_set(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


def sentence_found(sentence: str, candidates: Sequence[frozenset[str]]) -> bool:
    """Whether `sentence` is (fuzzily) one of `candidates` (token sets of the text's sentences)."""
    wanted = _token_set(sentence)
    if not wanted:
        return True
    need = FOUND_THRESHOLD * len(wanted)
    return any(len(wanted & cand) >= need for cand in candidates)


class _Sentences:
    """The token sets of one text's sentences and the values each carries (computed once per text:
    a skill text is read for every case asked with it, call after call)."""

    def __init__(self, text: str):
        parts = sentences(text)
        self.sets = tuple(_token_set(s) for s in parts)
        # A sentence naming a value its case does not hold is about another case (see `knowledge`).
        self.values = tuple(frozenset(values_in(s)) for s in parts)


@functools.lru_cache(maxsize=_CACHED)
def _sentences(text: str) -> _Sentences:
    return _Sentences(text)


def sentence_sets(text: str) -> tuple[frozenset[str], ...]:
    """Token sets of the sentences of `text` (input of `sentence_found` and `coverage`)."""
    return _sentences(text).sets


def knowledge(
    evidence: Sequence[str], rules: Sequence[str], own: frozenset[str], policy: frozenset[str], texts: Sequence[str],
    policy_reading: float, statements: Sequence[str] = (),
) -> float:
    """How much (0..1) of what a case turns on the agent knows from the skill `texts` it loaded.

    Only sentences that apply to the case count: a sentence carrying a value that neither the case
    (`own`) nor the policy holds is about another case. Three ways to know, the largest counts:
    - literally: the share of the case's own evidence sentences found in one applicable sentence
      (a line copied from this case: it helps this case only);
    - by rule: the share of the case's rules (world.CaseFacts.rules) that one applicable sentence
      states (a general rule learnt from one case helps every case that needs it);
    - by reading the policy: `policy_reading` × the share of the policy `statements` the case
      turns on (world.CaseFacts.statements: those of its deciding section that its evidence
      touches) that one applicable sentence holds (a model that reads prose well applies the
      policy it has in front of it).
    1.0 when the case has no evidence (nothing a skill could say decides it).
    """
    if not evidence:
        return 1.0
    allowed = own | policy
    usable = [
        tokens_ for text in texts for tokens_, values in zip(_sentences(text).sets, _sentences(text).values)
        if values <= allowed
    ]
    literal = sum(not _token_set(e) or sentence_found(e, usable) for e in evidence) / len(evidence)
    by_rule = sum(sentence_found(rule, usable) for rule in rules) / len(rules) if rules else 0.0
    read = sum(sentence_found(s, usable) for s in statements) / len(statements) if statements else 0.0
    return max(literal, by_rule, policy_reading * read)


def ranked(query: str, candidates: Iterable[tuple[str, str]]) -> list[tuple[str, int]]:
    """Candidates (key, text) that share words with `query`, most shared distinct words first.

    The diagnoser's relevance function: it picks the skill to fix with it. Ties keep the
    candidates' order.
    """
    wanted = set(tokens(query))
    scored = [(key, len(wanted & _token_set(text))) for key, text in candidates]
    return sorted((s for s in scored if s[1] > 0), key=lambda s: -s[1])


@functools.lru_cache(maxsize=64)
def _bm25_index(texts: tuple[str, ...]) -> Any:
    # One catalog is shown for every case of a round: index it once.
    from rank_bm25 import BM25Okapi

    return BM25Okapi([tokens(t) for t in texts])


def bm25_ranked(query: str, candidates: Iterable[tuple[str, str]]) -> list[tuple[str, float]]:
    """Candidates (key, text) that share words with `query`, highest Okapi BM25 score first.

    The executor's choice of skills from a catalog: the candidates' texts are the corpus (one
    document each, `words.tokens`), scored by rank-bm25's `BM25Okapi` (k1 = 1.5, b = 0.75,
    idf = ln((N − n + 0.5)/(n + 0.5)), floored at 0.25 × the mean idf; Robertson & Zaragoza 2009,
    "The Probabilistic Relevance Framework: BM25 and Beyond"). Chosen because it agrees best with
    the skills a real model loaded in the real-model trial (`bench/sim_choice.py`,
    docs/decisions/0057-sim-executor-bm25-choice.md).
    Only candidates sharing a token with `query` are returned (a floored idf can make a score ≤ 0,
    which is still a shared word); ties keep the candidates' order. Scores are unitless.
    """
    pairs = list(candidates)
    words = tokens(query)
    wanted = set(words)
    if not any(wanted & _token_set(text) for _, text in pairs):
        return []
    # A word the query repeats counts each time (rank-bm25 sums over the query's tokens).
    scores = _bm25_index(tuple(text for _, text in pairs)).get_scores(words)
    scored = [(key, float(score)) for (key, text), score in zip(pairs, scores) if wanted & _token_set(text)]
    return sorted(scored, key=lambda s: -s[1])


def skill_text(name: str, description: str) -> str:
    """The text a skill is matched on: its name (hyphens as spaces) and its description."""
    return f"{name.replace('-', ' ')} {description}"
