"""Agent message lists (OpenAI or Anthropic style) read as a trace's steps, the customer's words and the
final answer (`frames ingest trace`, ingest/feedback/trace.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


def message_text(value: Any) -> str:
    """Message content as text: strings as they are, OpenAI content parts joined, others as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        return "\n".join(
            message_text(p.get("text", p.get("content", ""))) for p in value
            if p.get("type", "text") in ("text", "tool_result")
        )
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def steps_from_messages(messages: Sequence[Any]) -> tuple[list[dict[str, Any]], str | None, str | None]:
    """Turn an OpenAI- or Anthropic-style message list into (steps, the customer's messages, final
    assistant answer). The customer's messages are every user turn's text, blank-line separated
    (tool results an Anthropic user turn carries are results, not the customer's words).

    Raises:
        ValueError: an item is not a message object with a `role`.
    """
    read = _Conversation()
    for i, msg in enumerate(messages, start=1):
        if not isinstance(msg, dict) or "role" not in msg:
            raise ValueError(f"message {i} is not an object with a `role`")
        role = msg["role"]
        content = msg.get("content")
        blocks = content if isinstance(content, list) and all(isinstance(b, dict) for b in content) else None
        if role == "user" and blocks is not None and any(b.get("type") == "tool_result" for b in blocks):
            read.tool_results(blocks)
        elif role == "user":
            read.user(message_text(content))
        elif role == "assistant" and blocks is not None and any(b.get("type") == "tool_use" for b in blocks):
            for block in blocks:
                if block.get("type") == "tool_use":
                    read.step(block.get("id"), {"tool": block.get("name"), "arguments": block.get("input")})
        elif role == "tool":
            read.result(msg.get("tool_call_id"), message_text(msg.get("content")))
        elif role == "assistant":
            read.assistant(msg)
    users = read.users
    return read.steps, "\n\n".join(u for u in users if u) if users else read.first_user, read.answer


@dataclass
class _Conversation:
    """The steps read so far from a message list, the text that is the next step's state, and the
    customer's messages and the final answer."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    by_call: dict[str, dict[str, Any]] = field(default_factory=dict)
    first_user: str | None = None
    users: list[str] = field(default_factory=list)
    answer: str | None = None

    def step(self, call_id: Any, action: dict[str, Any]) -> None:
        """A tool call (its id, `call_id`) made in the state the pending text describes."""
        step = {"state": "\n".join(self.pending), "action": action, "result": None}
        self.pending = []
        self.steps.append(step)
        self.by_call[str(call_id)] = step

    def result(self, call_id: Any, text: str) -> None:
        """The result of call `call_id`; pending text when no step waits for it."""
        step = self.by_call.get(str(call_id))
        if step is not None and step["result"] is None:
            step["result"] = text
        else:
            self.pending.append(text)

    def user(self, text: str) -> None:
        """A customer's message."""
        self.first_user = self.first_user if self.first_user is not None else text
        self.users.append(text)
        self.pending.append(text)

    def tool_results(self, blocks: list[dict[str, Any]]) -> None:
        """Anthropic: tool results come back in a user message, one block per tool_use id."""
        for block in blocks:
            if block.get("type") == "tool_result":
                result = message_text(block.get("content"))
                if block.get("is_error") and result:
                    result = f"error: {result}"
                self.result(block.get("tool_use_id"), result)
            elif block.get("type", "text") == "text" and block.get("text"):
                self.pending.append(str(block["text"]))

    def assistant(self, msg: dict[str, Any]) -> None:
        """An OpenAI assistant message: its tool calls, or with none its text, the final answer so far."""
        calls = msg.get("tool_calls") or []
        for call in calls:
            fn = (call or {}).get("function") or {}
            args = fn.get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    pass  # keep the model's malformed arguments as text: that may be the failure
            self.step((call or {}).get("id"), {"tool": fn.get("name"), "arguments": args})
        if not calls and msg.get("content"):
            self.answer = message_text(msg.get("content"))
            self.steps.append({"state": "\n".join(self.pending), "action": {"answer": self.answer}, "result": None})
            self.pending = []
