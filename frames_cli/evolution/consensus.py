"""Vote filtering: keep a skill's proposals only when at least q distinct diagnosers made them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from frames_cli.errors import ConfigError
from frames_cli.evolution.diagnose import Proposal


@dataclass(frozen=True)
class Change:
    """One distinct change text for a skill, with who proposed it and why.

    Attributes:
        change: the proposed edit, as the diagnoser wrote it.
        rationales: the distinct rationales given for it, in first-seen order.
        case_ids: motivating case ids, sorted, distinct.
        diagnosers: indexes of the diagnosers that proposed this exact text, sorted.
    """

    change: str
    rationales: tuple[str, ...]
    case_ids: tuple[str, ...]
    diagnosers: tuple[int, ...]


@dataclass(frozen=True)
class Blueprint:
    """The merged plan for one skill: what the rewriter is asked to do, and the evidence for it.

    Attributes:
        skill: skill name (existing, or the name of a new skill).
        new_skill: True when no skill of that name exists in the parent.
        description: for a new skill, the first description a diagnoser gave ("" otherwise).
        changes: distinct changes, in the order first proposed (diagnoser index, then position).
        votes: number of distinct diagnosers that proposed changing this skill.
    """

    skill: str
    new_skill: bool
    description: str
    changes: tuple[Change, ...]
    votes: int

    @property
    def case_ids(self) -> list[str]:
        """All motivating case ids, sorted, distinct."""
        return sorted({c for ch in self.changes for c in ch.case_ids})

    def to_json(self) -> dict:
        """Plain JSON: what the rewriter prompt shows and the run state stores."""
        return {
            "skill": self.skill,
            "new_skill": self.new_skill,
            "description": self.description,
            "votes": self.votes,
            "changes": [
                {"change": c.change, "rationale": " / ".join(c.rationales), "case_ids": list(c.case_ids), "diagnosers": list(c.diagnosers)}
                for c in self.changes
            ],
        }

    @classmethod
    def from_json(cls, obj: dict) -> Blueprint:
        """Inverse of `to_json` (rationales joined by " / " come back as one string)."""
        changes = tuple(
            Change(c["change"], (c["rationale"],) if c["rationale"] else (), tuple(c["case_ids"]), tuple(c["diagnosers"]))
            for c in obj["changes"]
        )
        return cls(obj["skill"], obj["new_skill"], obj["description"], changes, obj["votes"])


@dataclass(frozen=True)
class VoteResult:
    """Outcome of one vote: the blueprints kept and, per skill turned down, its vote count."""

    blueprints: list[Blueprint]
    rejected: dict[str, int] = field(default_factory=dict)
    threshold: int = 1


def resolve_threshold(q: int | str, diagnosers: int) -> int:
    """Turn the configured q (a number or "all") into a vote count for `diagnosers` diagnosers.

    `all` means every diagnoser that was asked, so a failed diagnoser call (which counts as no
    proposals) blocks unanimous changes rather than lowering the bar.

    Raises:
        ConfigError: q is larger than D, so no change could ever be accepted.
    """
    threshold = diagnosers if q == "all" else int(q)
    if threshold > diagnosers:
        raise ConfigError(
            f"`evolution.vote_threshold` ({q}) exceeds `evolution.diagnosers` ({diagnosers}): no change could ever pass the vote"
        )
    return threshold


def vote(proposals: Sequence[Proposal], threshold: int, existing: set[str] | frozenset[str]) -> VoteResult:
    """Group proposals by skill name, keep skills proposed by ≥ `threshold` distinct diagnosers.

    New skills are keyed by name exactly like existing ones: two diagnosers proposing a new skill
    "pet-policy" are two votes for it. A proposal is a new skill when its name is not in
    `existing` (the parent's skill names), whatever its `new_skill` flag says.

    Args:
        proposals: validated proposals of every diagnoser of the round.
        threshold: q as a count (see `resolve_threshold`), ≥ 1.
        existing: skill names of the parent.

    Returns:
        Blueprints sorted by skill name; `rejected` maps the other skills to their vote counts.
    """
    by_skill: dict[str, list[Proposal]] = {}
    for p in sorted(proposals, key=lambda p: (p.diagnoser, p.position)):
        by_skill.setdefault(p.skill, []).append(p)
    kept, rejected = [], {}
    for skill in sorted(by_skill):
        group = by_skill[skill]
        voters = {p.diagnoser for p in group}
        if len(voters) < threshold:
            rejected[skill] = len(voters)
            continue
        kept.append(_merge(skill, group, skill not in existing, len(voters)))
    return VoteResult(kept, rejected, threshold)


def _merge(skill: str, group: list[Proposal], new_skill: bool, votes: int) -> Blueprint:
    """One blueprint from a skill's proposals: identical change texts are merged, not repeated."""
    merged: dict[str, dict] = {}
    for p in group:
        key = " ".join(p.change.split())
        entry = merged.setdefault(key, {"change": p.change, "rationales": [], "cases": set(), "diagnosers": set()})
        if p.rationale and p.rationale not in entry["rationales"]:
            entry["rationales"].append(p.rationale)
        entry["cases"].update(p.case_ids)
        entry["diagnosers"].add(p.diagnoser)
    changes = tuple(
        Change(e["change"], tuple(e["rationales"]), tuple(sorted(e["cases"])), tuple(sorted(e["diagnosers"])))
        for e in merged.values()
    )
    description = next((p.description for p in group if p.description), "") if new_skill else ""
    return Blueprint(skill, new_skill, description, changes, votes)
