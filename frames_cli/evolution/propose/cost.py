"""The cost side of the front (issue #11 item 7): when the parent has few or no failures to learn
from, a round makes a cost-directed child that condenses the skills costing the most tokens per case.

A skill's cost per case is measured on the parent's diagnosis-set results (the selection set stays
blind): the share of results whose agent loaded it × its body's tokens. Condensing keeps every
rule: the rewrite passes the same guards as any other (the policy keeper refuses a dropped policy
sentence, since this blueprint cites no case), and the gate compares the child with S0 as usual.
The child joins the front when it keeps the pass rate with fewer tokens ("same pass rate, fewer
tokens"). See docs/decisions/0050-cost-directed-children.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from frames_cli.evolution.propose.consensus import Blueprint, Change
from frames_cli.llm.messages.conventions import CONDENSE
from frames_cli.tokens import approx_tokens

if TYPE_CHECKING:
    from frames_cli.formats.skill_set import SkillSet



@dataclass(frozen=True)
class SkillCost:
    """What one skill costs the agent, over one candidate's results.

    Attributes:
        skill: skill name.
        loads: results (case × sample) whose agent loaded the skill.
        results: results counted (the denominator of the load share).
        tokens: approximate tokens of the skill's body (`tokens.approx_tokens`: ⌈characters / 4⌉).
    """

    skill: str
    loads: int
    results: int
    tokens: int

    @property
    def per_case(self) -> float:
        """Tokens this skill adds to a case's prompts on average: loads / results × tokens."""
        return self.loads * self.tokens / self.results if self.results else 0.0

    def to_json(self) -> dict:
        """Plain JSON for the round record and the review."""
        return {"skill": self.skill, "loads": self.loads, "results": self.results, "tokens": self.tokens,
                "tokens_per_case": round(self.per_case, 1)}

    def line(self) -> str:
        """One line for people: "`book-flight`: loaded in 12 of 31 results × 1,204 tokens = 466 tokens per case"."""
        return (f"`{self.skill}`: loaded in {self.loads} of {self.results} results × {self.tokens:,} tokens "
                f"= {self.per_case:,.0f} tokens per case")


def skill_costs(results: Iterable[dict], skills: SkillSet) -> list[SkillCost]:
    """Cost per case of every skill of `skills` that some result loaded, costliest first (ties by name).

    Args:
        results: per-case result records (`skills_used`: names of the skills the agent loaded); lost
            results are left out (no agent ran to its end).
        skills: the candidate's skills (their bodies are measured).
    """
    counted = [r for r in results if not r.get("lost")]
    loads: dict[str, int] = {}
    for r in counted:
        for name in dict.fromkeys(r.get("skills_used") or []):
            loads[name] = loads.get(name, 0) + 1
    costs = [
        SkillCost(name, n, len(counted), approx_tokens(skills[name].body)) for name, n in loads.items()
        if name in skills
    ]
    return sorted(costs, key=lambda c: (-c.per_case, c.skill))


def condense_blueprints(costs: list[SkillCost], count: int) -> list[Blueprint]:
    """Blueprints that condense the `count` costliest skills; no case is cited and no diagnoser voted."""
    return [
        Blueprint(
            c.skill, False, "", (Change(CONDENSE, (f"It costs the most tokens per case: {c.line()}.",), (), ()),), 0
        )
        for c in costs[:count]
        if c.per_case > 0
    ]
