"""The simulator's sense of text: evidence coverage and skill relevance."""

from __future__ import annotations

import functools
from typing import Iterable, Sequence

from frames_cli.ingest.text import sentences, tokens

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
    """The token sets of one text's sentences, and which sentences were looked for in them.

    A skill text is searched for the evidence of every case asked with it, call after call; each
    answer is kept, so a (sentence, text) pair is compared only once however often it recurs.
    """

    def __init__(self, text: str):
        self.sets = tuple(_token_set(s) for s in sentences(text))
        self._found: dict[str, bool] = {}

    def holds(self, sentence: str) -> bool:
        """`sentence_found(sentence, self.sets)`, remembered (a racing thread computes the same value)."""
        found = self._found.get(sentence)
        if found is None:
            found = self._found[sentence] = sentence_found(sentence, self.sets)
        return found


@functools.lru_cache(maxsize=_CACHED)
def _sentences(text: str) -> _Sentences:
    return _Sentences(text)


def sentence_sets(text: str) -> tuple[frozenset[str], ...]:
    """Token sets of the sentences of `text` (input of `sentence_found` and `coverage`)."""
    return _sentences(text).sets


def coverage(evidence: Sequence[str], texts: Sequence[str]) -> float:
    """Share (0..1) of the evidence sentences found in any of `texts`; 1.0 when there is no evidence.

    A case without evidence depends on nothing the skills could say, so knowledge is not its limit.
    A sentence without content words counts as found (as `sentence_found` has it), even in no text.
    """
    if not evidence:
        return 1.0
    found = [_sentences(text) for text in texts]
    return sum(not _token_set(e) or any(f.holds(e) for f in found) for e in evidence) / len(evidence)


def ranked(query: str, candidates: Iterable[tuple[str, str]]) -> list[tuple[str, int]]:
    """Candidates (key, text) that share words with `query`, most shared distinct words first.

    The one relevance function of the simulator: the executor picks skills to load with it and the
    diagnoser picks the skill to fix with it, so an insightful fix lands where the executor looks.
    Ties keep the candidates' order.
    """
    wanted = set(tokens(query))
    scored = [(key, len(wanted & _token_set(text))) for key, text in candidates]
    return sorted((s for s in scored if s[1] > 0), key=lambda s: -s[1])


def skill_text(name: str, description: str) -> str:
    """The text a skill is matched on: its name (hyphens as spaces) and its description."""
    return f"{name.replace('-', ' ')} {description}"
