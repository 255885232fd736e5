"""Simulated coldstart rewriter: the policy section as a numbered procedure, every sentence kept,
and a description of what the section decides."""

from __future__ import annotations

from typing import Any

from frames_cli.ingest.text import rule_sentences, sentences
from frames_cli.sim import reading
from frames_cli.sim.base import SimCall


def behave(call: SimCall) -> dict[str, Any]:
    """COLDSTART_REWRITE JSON: one numbered step per sentence of the `<policy>` block, in the
    section's order, and a description.

    Sentences (and so every number and condition) are kept word for word; headings are dropped
    because the skill's name carries them. The description is what a careful model writes from the
    section alone: its heading (the `heading` attribute's last part), its first rule sentence (else
    its first sentence) and when to use it.
    """
    found = reading.policy_block(call.prompt)
    if found is None:
        return {"body": "", "description": ""}
    attrs, text = found
    lines = [line for line in text.split("\n") if not line.lstrip().startswith("#")]
    steps = sentences("\n".join(lines))
    topic = attrs.get("heading", "").split(" > ")[-1].strip() or "this policy section"
    lead = (rule_sentences("\n".join(lines)) or steps or [""])[0].rstrip(".")
    description = f"Decides {topic[:1].lower() + topic[1:]}: {lead}. Use when a request concerns {topic.lower()}."
    # The prompt forbids angle brackets and markup in descriptions; a careful model leaves them out.
    description = " ".join(description.translate(str.maketrans("", "", "<>|{}")).split())
    return {"body": "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)) + "\n", "description": description}
