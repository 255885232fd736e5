"""A model request as the executor makes it (model client, call pool and notice tests)."""

from __future__ import annotations

from frames_cli.llm.client.client import ChatRequest
from frames_cli.llm.messages.prompts import render
from frames_cli.llm.messages.schemas import EXECUTOR_STEP

#: The executor's catalog of three skills.
CATALOG = ("3 skills available:\ns1: baggage-allowance — Free checked bags by membership and cabin\n"
           "s2: cancel-flight — Cancel reservations\ns3: delay-compensation — Delays and compensation")


def executor_request(case_id: str = "bags-1", sample: int = 0, note: str = "") -> ChatRequest:
    """An executor's first request for case `case_id` (a question on bags, `note` appended), on CATALOG."""
    prompt = render("executor_catalog", case_id=case_id, given="", catalog=CATALOG,
                    request="How many free bags?" + note, answer_format="a number", max_loads=3)
    return ChatRequest("executor", [{"role": "user", "content": prompt}], schema=EXECUTOR_STEP, sample=sample,
                       tag=case_id)
