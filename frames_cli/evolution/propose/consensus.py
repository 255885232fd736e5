"""Consensus: keep a skill's proposals only when at least q distinct diagnosers made them, and merge
the proposals that state the same rule into one change (FRAMES' unified blueprint per skill)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from frames_cli.evolution.propose import rules
from frames_cli.evolution.propose.diagnose import Proposal


@dataclass(frozen=True)
class Change:
    """One rule for a skill: the proposals that state it, merged, with who proposed it and why.

    Attributes:
        change: the one wording the rewriter is given (the group's medoid, see `rules.medoid`), or,
            when the wordings contradict each other, the instruction to write at most one of them.
        rationales: the distinct rationales given for it, in first-seen order.
        case_ids: motivating case ids, sorted, distinct.
        diagnosers: indexes of the diagnosers that proposed it, sorted; its votes are their number.
        wordings: every distinct rule text the proposals used (`Proposal.rule_text`), first-seen
            order (one when they all wrote the same words).
        conflict: why the wordings contradict each other ("" when they agree).
        rules: the sentences the change adds (the chosen proposal's `rules`); empty for a
            contradiction, whose options are the wordings, and for a change that adds none.
    """

    change: str
    rationales: tuple[str, ...]
    case_ids: tuple[str, ...]
    diagnosers: tuple[int, ...]
    wordings: tuple[str, ...] = ()
    conflict: str = ""
    rules: tuple[str, ...] = ()

    @property
    def votes(self) -> int:
        """Distinct diagnosers behind this change."""
        return len(self.diagnosers)

    def to_json(self, *, for_rewriter: bool = False) -> dict:
        """Plain JSON. The rewriter sees other wordings only for a contradiction, where they are
        the options; for agreeing proposals it gets the one wording, so nothing is written twice."""
        out: dict = {"change": self.change, "rules": list(self.rules), "votes": self.votes,
                     "rationales": list(self.rationales), "case_ids": list(self.case_ids),
                     "diagnosers": list(self.diagnosers)}
        if self.conflict:
            out["conflict"] = self.conflict
        if self.conflict or not for_rewriter:
            out["wordings"] = list(self.wordings)
        return out

    @classmethod
    def from_json(cls, obj: dict) -> Change:
        """Inverse of `to_json`; also reads the state of runs made before merging (one joined
        `rationale` string, no wordings). A run recorded before `rules` is upgraded first (state/upgrades.py)."""
        rationales = (
            tuple(obj["rationales"]) if "rationales" in obj else ((obj["rationale"],) if obj.get("rationale") else ())
        )
        return cls(obj["change"], rationales, tuple(obj["case_ids"]), tuple(obj["diagnosers"]),
                   tuple(obj.get("wordings", ())), obj.get("conflict", ""), tuple(obj["rules"]))


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

    def to_json(self, *, for_rewriter: bool = False) -> dict:
        """Plain JSON: what the run state stores, or (`for_rewriter`) what the rewriter prompt shows."""
        return {
            "skill": self.skill,
            "new_skill": self.new_skill,
            "description": self.description,
            "votes": self.votes,
            "changes": [c.to_json(for_rewriter=for_rewriter) for c in self.changes],
        }

    @classmethod
    def from_json(cls, obj: dict) -> Blueprint:
        """Inverse of `to_json`."""
        changes = tuple(Change.from_json(c) for c in obj["changes"])
        return cls(obj["skill"], obj["new_skill"], obj["description"], changes, obj["votes"])


@dataclass(frozen=True)
class VoteResult:
    """Outcome of one vote: the blueprints kept and, per skill turned down, its vote count."""

    blueprints: list[Blueprint]
    rejected: dict[str, int] = field(default_factory=dict)
    threshold: int = 1


def vote(
    proposals: Sequence[Proposal], threshold: int, existing: set[str] | frozenset[str],
    merge_threshold: float | None = None,
) -> VoteResult:
    """Group proposals by skill name, keep skills proposed by ≥ `threshold` distinct diagnosers,
    and merge each kept skill's proposals into one change per rule.

    New skills are keyed by name exactly like existing ones: two diagnosers proposing a new skill
    "pet-policy" are two votes for it. A proposal is a new skill when its name is not in
    `existing` (the parent's skill names), whatever its `new_skill` flag says.

    Args:
        proposals: validated proposals of every diagnoser of the round.
        threshold: q as a count (see settings.resolve_threshold), ≥ 1.
        existing: skill names of the parent.
        merge_threshold: proposals of different diagnosers whose rules have a `rules.similarity`
            at least this are one change (`evolution.merge_threshold`); None merges identical
            wording only, one change per distinct text (frames before merging).

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
        kept.append(_merge(skill, group, skill not in existing, len(voters), merge_threshold))
    return VoteResult(kept, rejected, threshold)


def conflict_instruction(reason: str) -> str:
    """The change text of a contradiction: the rewriter writes at most one wording, never both."""
    return (
        f"The diagnosers contradict each other on this rule ({reason}). Write at most one of the "
        "wordings listed under `wordings`: the one that the policy and the anchor cases support. "
        "If neither is supported, leave the rule as the skill states it now."
    )


def _merge(skill: str, group: list[Proposal], new_skill: bool, votes: int, merge_threshold: float | None) -> Blueprint:
    """One blueprint from a skill's proposals: proposals that state one rule become one change."""
    texts = [p.rule_text for p in group]
    voters = [p.diagnoser for p in group]
    # No merging beyond identical text: a threshold above any similarity keeps distinct texts apart.
    members_list = rules.group(texts, voters, merge_threshold if merge_threshold is not None else float("inf"))
    changes = []
    for members in members_list:
        props = [group[i] for i in members]
        wordings = tuple(dict.fromkeys(texts[i] for i in members))
        conflict = next(
            (why for a in range(len(wordings)) for b in range(a + 1, len(wordings))
             if (why := rules.contradiction(wordings[a], wordings[b]))),
            "",
        )
        chosen = group[rules.medoid(texts, members)]
        changes.append(Change(
            change=conflict_instruction(conflict) if conflict else chosen.change,
            rationales=tuple(dict.fromkeys(p.rationale for p in props if p.rationale)),
            case_ids=tuple(sorted({c for p in props for c in p.case_ids})),
            diagnosers=tuple(sorted({p.diagnoser for p in props})),
            wordings=wordings,
            conflict=conflict,
            rules=() if conflict else chosen.rules,
        ))
    description = next((p.description for p in group if p.description), "") if new_skill else ""
    return Blueprint(skill, new_skill, description, tuple(changes), votes)
