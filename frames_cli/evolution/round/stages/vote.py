"""Stage `vote`: the skills at least q distinct diagnosers proposed, each merged into one blueprint
(evolution/propose/consensus.py). A disputed case is never turned into a rule, whichever diagnoser
cites it: such citations are dropped first, and a proposal left citing nothing is not counted.

Returns a `Vote`; reads only its arguments (no model call, no file).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from frames_cli.evolution.propose.consensus import Blueprint, vote
from frames_cli.evolution.propose.diagnose import DiagnoserResult


@dataclass(frozen=True)
class Vote:
    """The vote's outcome.

    Attributes:
        blueprints: one per skill that passed the vote.
        rejected: skill → votes, for the skills that did not.
        note: "no skill reached the vote threshold" when diagnosers answered and none did, else "".
    """

    blueprints: tuple[Blueprint, ...] = ()
    rejected: dict[str, int] = field(default_factory=dict)
    note: str = ""


def vote_round(
    results: Sequence[DiagnoserResult], excluded: Iterable[str], parent_skills: Iterable[str], threshold: int,
    merge_threshold: float | None,
) -> Vote:
    """The vote over the proposals of `results` (`threshold` = q) with disputed cases (`excluded`) left out;
    `parent_skills` are the names of the parent's skills (a proposal naming another is a new skill)."""
    left_out = set(excluded)
    proposals = []
    for d in results:
        for p in d.proposals:
            cited = tuple(c for c in p.case_ids if c not in left_out)
            if cited:
                proposals.append(dataclasses.replace(p, case_ids=cited))
    result = vote(proposals, threshold, set(parent_skills), merge_threshold)
    note = "no skill reached the vote threshold" if results and not result.blueprints else ""
    return Vote(tuple(result.blueprints), result.rejected, note)
