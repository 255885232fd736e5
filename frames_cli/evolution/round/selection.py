"""Parent selection: the Selector protocol and round-robin over the Pareto front."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from frames_cli.evolution.compare.front import FrontPoint


class Selector(Protocol):
    """Picks the parent of the next child from the current front.

    Contract: pure and deterministic; `front` is non-empty; `picks` maps candidate id → how often
    it was already chosen in this run (missing = never). Returns one key of `front`.
    """

    def choose(self, front: Sequence[FrontPoint], picks: Mapping[str, int]) -> str:
        """Return the id of the parent."""
        ...


@dataclass(frozen=True)
class RoundRobinSelector:
    """Round-robin over the front (FRAMES): the least-picked member first, oldest first on ties.

    On a front that does not change this visits every member in creation order, then starts
    again. When the front changes, counting picks (rather than keeping a cursor into a list
    that no longer exists) lets a new member be tried next and skips members that left.
    """

    def choose(self, front: Sequence[FrontPoint], picks: Mapping[str, int]) -> str:
        """Return the key of the least-picked front member (ties: lowest `order`).

        Raises:
            ValueError: `front` is empty.
        """
        if not front:
            raise ValueError("cannot choose a parent from an empty front")
        return min(front, key=lambda p: (picks.get(p.key, 0), p.order, p.key)).key
