"""Simulated coldstart rewriter: the policy section as a numbered procedure, every sentence kept,
and a description of what the section decides."""

from __future__ import annotations

import re
from typing import Any

from frames_cli.coldstart.prose import sentences
from frames_cli.sim import reading
from frames_cli.sim.base import SimCall

# The limit the prompt sets on the description ("at most 180 characters"); 250 when it sets none.
_LIMIT = re.compile(r"description[^\n]*?at most (\d+) characters")
_DEFAULT_LIMIT = 250


def behave(call: SimCall) -> dict[str, Any]:
    """COLDSTART_REWRITE JSON: one numbered step per sentence of the `<policy>` block, in the
    section's order, and a description.

    Sentences (and so every number and condition) are kept word for word, read as a person reads
    Markdown (`coldstart.prose.sentences`: a sentence wrapped over lines or a numbered step with
    its indented lines is one step, never cut at the line break); headings are dropped because
    the skill's name carries them. The description is what a careful model writes from the
    section alone: its heading (the `heading` attribute's last part), its first rule sentence
    (else its first sentence) when the whole stays within the prompt's "at most N characters",
    and when to use it.
    """
    found = reading.policy_block(call.prompt)
    if found is None:
        return {"body": "", "description": ""}
    attrs, text = found
    lines = [(no, line) for no, line in enumerate(text.split("\n"), 1) if not line.lstrip().startswith("#")]
    read = sentences(lines)
    # Table rows are not sentences; they are kept as rows, so their numbers stay too.
    steps = [s.text for s in read] + [
        line.strip() for _, line in lines if line.lstrip().startswith("|") and not set(line) <= set("|-: ")
    ]
    topic = attrs.get("heading", "").split(" > ")[-1].strip() or "this policy section"
    subject, use = topic[:1].lower() + topic[1:], f" Use when a request concerns {topic.lower()}."
    limit = int(asked.group(1)) if (asked := _LIMIT.search(call.prompt)) else _DEFAULT_LIMIT
    room = limit - len(f"Decides {subject}: .{use}")  # what the rule sentence may take
    lead = next(
        (s.text for s in read if s.states_rule() and len(s.text) <= room),
        next((t for t in steps if len(t) <= room), ""),
    ).rstrip(".")
    said = f": {lead}." if lead else "."
    description = f"Decides {subject}{said}{use}"
    # The prompt forbids angle brackets and markup in descriptions; a careful model leaves them out.
    description = " ".join(description.translate(str.maketrans("", "", "<>|{}")).split())
    return {"body": "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)) + "\n", "description": description}
