"""Pieces of diagnoser and rewriter prompts that follow ARCHITECTURE's prompt conventions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from frames_cli.formats.skill import Skill


def skill_block(skill: Skill, *, target: bool = False, describe: bool = False) -> str:
    """`<skill name="X">` body `</skill>`; `target="true"` marks the rewriter's one target;
    `describe` adds `description="..."`: what the agent's catalog shows, so a diagnoser can tell
    which skill the agent would load for a case."""
    attrs = f'name="{skill.name}"' + (' target="true"' if target else "")
    if describe:
        # An attribute value cannot hold a double quote; descriptions cannot hold < or > (spec).
        description = " ".join(skill.description.split()).replace('"', "'")
        attrs += f' description="{description}"'
    # Only trailing newlines go: the body's own leading text and protected regions stay exact.
    body = skill.body.rstrip("\n")
    return f"<skill {attrs}>\n{body}\n</skill>"


def skill_blocks(skills: Iterable[Skill]) -> str:
    """Every skill as a described block, separated by blank lines (the whole set, as diagnosers see it)."""
    return "\n\n".join(skill_block(s, describe=True) for s in skills)


def json_block(obj: Any) -> str:
    """A fenced ```json block (the simulator and people both read these)."""
    return "```json\n" + json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n```"


#: The answer shapes the prompts spell out (schemas.DIAGNOSIS and schemas.REWRITE are the contract).
DIAGNOSIS_FORMAT = (
    '{"proposals": [{"skill": "<skill name>", "change": "<the edit>", "rationale": "<why>", '
    '"case_ids": ["<case id>"], "new_skill": false, "description": "<only for a new skill>"}]}'
)
REWRITE_FORMAT = '{"body": "<the whole new Markdown body>", "description": "<optional new description>"}'
