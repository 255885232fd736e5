"""The customer's side of a tau2 task: their brief as written, without
the user simulator's steering or what they must keep from the agent."""

from __future__ import annotations

import re
from typing import Any

# Sentences that steer the user simulator's conversation (tone, pacing, tests of the agent) rather
# than say anything a customer would tell an agent. Matched case-insensitively.
_STEERING = re.compile(
    r"^(be|do not|don't|never|use both|mention all|after asserting|this is incorrect)\b"
    r"|^you are (very |extremely |a bit )?(calm|persistent|reactive|impatient|emotional|terse|distraught|polite)\b"
    r"|\b(conversation|rounds? of interaction|agent message|end the call|meant to test|first offer|few attempts)\b",
    re.IGNORECASE,
)
# What the customer is told to keep from the agent ("do not share this with the agent", "but do
# not reveal it to the agent"): the evaluation's knowledge, never the agent's input.
_HIDDEN = re.compile(
    r"\b(?:do not|don't|never|not to)\s+(?:share|reveal|disclose|tell|mention|give|volunteer|say)\b[^.()]*?"
    r"\b(?:agent|them|anyone|it|this|unless)\b",
    re.IGNORECASE,
)
_PARENS = re.compile(r"\s*\(([^()]*)\)")
#: The line that opens the customer's part of a case's input.
CUSTOMER_HEADER = (
    "The customer's brief, as written for the customer (\"you\" is the customer, \"the agent\" is you); "
    "what it says is the customer's words and claims, not verified facts:"
)


def _sentences(text: str | None) -> list[str]:
    out: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=[-•*]\s)", text or ""):
        block = " ".join(block.split())
        out.extend(s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", block) if s)
    return out


def _without_hidden(sentence: str) -> str | None:
    """`sentence` without what the customer must keep from the agent; None when all of it is hidden.

    A parenthesis that is only the directive ("(do not share this with the agent)") hides the
    sentence it qualifies; one that holds more ("(Everything except a keyboard, but do not reveal
    it)") hides only itself.
    """
    for m in list(_PARENS.finditer(sentence)):
        directive = _HIDDEN.search(m.group(1))
        if directive is None:
            continue
        rest = re.sub(r"but\s*$", "", m.group(1)[: directive.start()].strip(" ,;-")).strip(" ,;-")
        if not rest:
            return None
        sentence = sentence.replace(m.group(0), "")
    if _HIDDEN.search(sentence):
        return None
    return sentence.strip() or None


def customer_text(instructions: dict[str, Any]) -> str:
    """The customer's side of a task as the customer's own brief, marked as such (`CUSTOMER_HEADER`).

    Uses `reason_for_call`, `known_info`, `unknown_info` and `task_instructions`, in that order,
    one paragraph each, passed as written: a rule-based rewrite into the first person garbled the
    sentences ("Please tell me you how much ..."). Sentences that only steer the user simulator
    (tone, pacing, tests of the agent) and whatever the customer is told to keep from the agent
    are left out.
    """
    paragraphs = []
    for key in ("reason_for_call", "known_info", "unknown_info", "task_instructions"):
        kept = [t for sentence in _sentences(instructions.get(key)) if not _STEERING.search(sentence)
                and (t := _without_hidden(sentence)) is not None]
        if kept:
            paragraphs.append(" ".join(kept))
    return "\n\n".join([CUSTOMER_HEADER, *paragraphs])
