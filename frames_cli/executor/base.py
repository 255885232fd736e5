"""The Executor protocol (the agent under test), the request it reads and the AgentResult it returns per case."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from frames_cli.formats.case import AgentCase
from frames_cli.formats.skill_set import SkillSet
from frames_cli.llm.messages.types import Usage


@dataclass
class AgentResult:
    """What the agent did on one case.

    Attributes:
        case_id: the case's id.
        output: the answer, in the case's answer format (None when the agent failed).
        skills_used: names of the skills the agent says it used (unknown names dropped); the built-in
            agent puts the skills it was given with the case (`general-rules`) first.
        usage: tokens (prompt, completion) and USD the case cost.
        trajectory: steps ``{"step", "state", "action", "result"}`` in order.
        error: why the agent produced no answer (crash, timeout, bad JSON, model failure); None if it answered.
        lost: the answer was lost to the model layer or the agent's infrastructure, not failed by
            the agent (see `ChatReply.lost`; a command agent exiting with EX_TEMPFAIL, 75): the
            evaluation runs the case again, then leaves it out of the scores.
    """

    case_id: str
    output: Any = None
    skills_used: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    lost: bool = False


class Executor(Protocol):
    """Runs the agent under test on cases with a skill set (DESIGN §5).

    Contract:
        - Blind: it gets `AgentCase`s (id, input, answer format) and never a diagnosis or an
          expected answer.
        - `run` returns one AgentResult per case, in the order of `cases`.
        - A failing case is a result with `error` set, never an exception; only a problem with the
          whole run (budget spent, bad configuration) raises.
        - `sample` numbers independent attempts at the same case (pass@k); attempt 0 and 1 of the
          same case may differ, attempt 0 twice is the same request (and may be served from cache).
        - A result whose answer was lost (a provider that kept failing, a reply still malformed
          after the repair turns) has `lost` set. `evaluate` then runs the case again with
          `retry` = 1, 2, …, which asks the provider afresh rather than repeating the same call.
    """

    def run(self, cases: Sequence[AgentCase], skills: SkillSet, sample: int = 0, retry: int = 0) -> list[AgentResult]:
        """Run the agent on every case; see the class contract."""
        ...


def request_text(task_input: dict[str, Any]) -> str:
    """A case input as the agent reads it: the text, then the fields as one JSON block."""
    text = task_input.get("text", "")
    fields = task_input.get("fields") or {}
    if not fields:
        return text
    return f"{text}\n\nDetails:\n```json\n{json.dumps(fields, ensure_ascii=False, separators=(',', ':'))}\n```"
