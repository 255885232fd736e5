"""Simulated rubric judge: a deterministic verdict from the case's expected answer."""

from __future__ import annotations

import json
from typing import Any

from frames_cli.ingest.text import overlap
from frames_cli.sim import reading
from frames_cli.sim.base import SimCall
from frames_cli.sim.matching import FOUND_THRESHOLD


def behave(call: SimCall) -> dict[str, Any]:
    """RUBRIC_VERDICT JSON for the case on the `Case id:` line and the ```json `Answer:` block.

    Pass when the answer equals `task.expected` (canonical JSON, case-insensitive), or, for a text
    expectation, when the answer holds at least FOUND_THRESHOLD of its content words. No draw: a
    judge model is assumed reliable, so evaluation noise comes from the executor alone.
    """
    case = call.world.get(reading.case_id(call.prompt))
    if case is None:
        return {"pass": False, "reason": "the simulator does not know this case"}
    answer = reading.json_after(call.prompt, "Answer")
    expected = case.task.expected
    canon = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False).casefold()  # noqa: E731
    if canon(answer) == canon(expected):
        return {"pass": True, "reason": "the answer matches the expected one"}
    if isinstance(expected, str) and overlap(expected, canon(answer)) >= FOUND_THRESHOLD:
        return {"pass": True, "reason": "the answer states what the rubric asks for"}
    return {"pass": False, "reason": f"the answer differs from the expected {json.dumps(expected, ensure_ascii=False)[:200]}"}
