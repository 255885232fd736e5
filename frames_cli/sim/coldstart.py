"""Simulated coldstart rewriter: the policy section as a numbered procedure, every sentence kept."""

from __future__ import annotations

from typing import Any

from frames_cli.ingest.text import sentences
from frames_cli.sim import reading
from frames_cli.sim.base import SimCall


def behave(call: SimCall) -> dict[str, Any]:
    """REWRITE JSON: one numbered step per sentence of the `<policy>` block, in the section's order.

    Sentences (and so every number and condition) are kept word for word; headings are dropped
    because the skill's name carries them.
    """
    found = reading.policy_block(call.prompt)
    if found is None:
        return {"body": ""}
    lines = [line for line in found[1].split("\n") if not line.lstrip().startswith("#")]
    steps = sentences("\n".join(lines))
    return {"body": "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)) + "\n"}
