"""Simulated rubric judge: a deterministic verdict from the case's expected answer."""

from __future__ import annotations

import json
from typing import Any

from frames_cli.evaluation.checks import clip
from frames_cli.evaluation.normalise import canonical
from frames_cli.words import overlap
from frames_cli.sim import reading
from frames_cli.sim.base import SimCall
from frames_cli.sim.matching import FOUND_THRESHOLD


def behave(call: SimCall) -> dict[str, Any]:
    """RUBRIC_VERDICT JSON for the case on the `Case id:` line and the ```json `Answer:` block.

    Pass when the answer equals `task.expected` (canonical JSON, case-insensitive), or, for a text
    rubric (a string or a list of strings), when the answer holds at least FOUND_THRESHOLD of the
    content words of every rubric item, numbers read by value on both sides ("$5,244.00" is 5244,
    as the judge prompt tells a model). No draw: a
    judge model is assumed reliable, so evaluation noise comes from the executor alone.
    """
    case = call.world.get(reading.case_id(call.prompt))
    if case is None:
        return {"pass": False, "reason": "the simulator does not know this case"}
    answer = reading.json_after(call.prompt, "Answer")
    expected = case.task.expected
    canon = canonical(json.dumps(answer, sort_keys=True, ensure_ascii=False))
    if canon == canonical(json.dumps(expected, sort_keys=True, ensure_ascii=False)):
        return {"pass": True, "reason": "the answer matches the expected one"}
    items = expected if isinstance(expected, list) and all(isinstance(e, str) for e in expected) else [expected]
    if all(isinstance(item, str) and overlap(canonical(item), canon) >= FOUND_THRESHOLD for item in items):
        return {"pass": True, "reason": "the answer states what the rubric asks for"}
    return {
        "pass": False,
        "reason": f"the answer differs from the expected {clip(json.dumps(expected, ensure_ascii=False), 200)}",
    }
