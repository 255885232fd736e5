"""Missing descriptions written by `models.coldstart` for `frames adopt` (one request per skill, one batch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from frames_cli.adopt.describe import TEXT_DESCRIPTION_CHARS, clean, shorten

if TYPE_CHECKING:
    from frames_cli.llm.client.client import ModelClient


def model_describer(client: ModelClient):  # type: ignore[no-untyped-def]
    """A `run.Describer` asking the `coldstart` role (prompt `adopt_describe`, schema ADOPT_DESCRIPTION).

    An answer that is not valid after the client's repair turn gives None for that skill, so its
    description is written from the text and the report says why.
    """
    from frames_cli.llm.messages.prompts import render
    from frames_cli.llm.messages.schemas import ADOPT_DESCRIPTION
    from frames_cli.llm.messages.types import ChatRequest

    model = client.model_for("coldstart")

    def describe(skills: list[tuple[str, str]]) -> list[tuple[str, str] | None]:
        requests = [
            ChatRequest(
                "coldstart", [{"role": "user", "content": render("adopt_describe", skill_name=name, body=body)}],
                ADOPT_DESCRIPTION, tag=f"adopt:{name}",
            )
            for name, body in skills
        ]
        out: list[tuple[str, str] | None] = []
        for reply in client.chat_many(requests):
            text = shorten(clean(reply.data["description"]), TEXT_DESCRIPTION_CHARS) if reply.ok else ""
            out.append((text, f"by {model}") if text else None)
        return out

    return describe
