"""The skills a new skill could be mistaken for: what the model is shown so that its description
sets the skill apart from them.

Closeness is BM25 (rank-bm25's Okapi, k1 = 1.5, b = 0.75) between catalog lines (`name —
description`, the verbatim descriptions), each line the query against all the others: the same
ranking an agent's first look at the catalog is measured with in `bench/catalog_choice.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Neighbours shown per skill.
NEIGHBOURS = 6


@dataclass(frozen=True)
class Neighbour:
    """A skill close to another one: its `name`, policy `file` and `heading` path (" > " joined)."""

    name: str
    file: str
    heading: str

    def line(self) -> str:
        """`- name (file: heading)`, as the coldstart prompt lists it."""
        return f"- {self.name} ({self.file}: {self.heading})"


def closest(entries: list[tuple[Neighbour, str]], k: int = NEIGHBOURS) -> dict[str, list[Neighbour]]:
    """For each (skill, catalog line) the `k` other skills whose lines are closest to its own,
    closest first (ties in input order); skills sharing no word with it are left out.

    Args:
        entries: every skill of the set with its verbatim catalog line, in document order.

    Returns:
        skill name → up to `k` neighbours (empty for a set of one skill).
    """
    from frames_cli.words import tokens

    docs = [tokens(text) for _, text in entries]
    if len(entries) < 2:
        return {e.name: [] for e, _ in entries}
    from rank_bm25 import BM25Okapi

    index = BM25Okapi(docs)
    out: dict[str, list[Neighbour]] = {}
    for i, (entry, _) in enumerate(entries):
        scores = index.get_scores(docs[i])
        order = sorted((j for j in range(len(entries)) if j != i and scores[j] > 0), key=lambda j: -scores[j])
        out[entry.name] = [entries[j][0] for j in order[:k]]
    return out
