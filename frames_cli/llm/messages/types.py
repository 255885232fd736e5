"""The data that crosses the model layer: ChatRequest in, ChatReply (with Usage) out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ChatRequest:
    """One question to the model of a role.

    Attributes:
        role: "executor", "diagnoser", "rewriter", "generator", "judge", "keys" or "coldstart"; picks
            `config.models.<role>`.
        messages: OpenAI-style chat messages (`{"role": ..., "content": str}`), sent as they are.
        schema: JSON Schema the answer must match (see `llm/messages/schemas.py`); None = free text.
        sample: index of an independent sample of the same request (pass@k); part of the cache key.
        tag: free label for the audit log (e.g. a case id); not part of the cache key.
        retry: how many times the evaluation already re-ran this request because its answer was
            lost (evaluation/runner.evaluate); its calls' attempt numbers continue after those
            rounds' attempts, so a provider (or the simulator's fault stream) is asked afresh.
            Not part of the cache key: a lost answer was never cached.
    """

    role: str
    messages: list[dict[str, Any]]
    schema: dict[str, Any] | None = None
    sample: int = 0
    tag: str = ""
    retry: int = 0


@dataclass
class Usage:
    """Tokens and money one reply cost.

    Attributes:
        prompt_tokens / completion_tokens: as the provider reported them (tokens).
        cost_usd: US dollars as litellm priced it (cached prompt tokens at the model's cached rate
            where litellm knows one); None when the model's price is unknown.
        cached_prompt_tokens: the part of `prompt_tokens` the provider read from its prompt cache.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    cached_prompt_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt + completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        """Add `other` in place; a known cost plus an unknown one stays the known part."""
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_prompt_tokens += other.cached_prompt_tokens
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd

    def to_dict(self) -> dict[str, Any]:
        """`{"prompt_tokens", "completion_tokens", "cost_usd"}`, and `"cached_prompt_tokens"` when
        there are any (records of providers without prompt caching stay as they were)."""
        out = {
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens, "cost_usd": self.cost_usd,
        }
        if self.cached_prompt_tokens:
            out["cached_prompt_tokens"] = self.cached_prompt_tokens
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        """The inverse of `to_dict` (missing counts are 0)."""
        return cls(
            int(data.get("prompt_tokens", 0)), int(data.get("completion_tokens", 0)), data.get("cost_usd"),
            int(data.get("cached_prompt_tokens", 0)),
        )


@dataclass
class ChatReply:
    """The outcome of one ChatRequest: an answer or a recorded failure, never an exception.

    Attributes:
        text: the model's final reply text (None when no reply came).
        data: the parsed, schema-valid JSON answer when `request.schema` was given, else None.
        usage: tokens and cost of every model turn spent on this request (repair turn included).
        cached: served from the on-disk cache; no model was called.
        error: why the request failed (after retries or the repair turn); None on success.
        attempts: model calls made (retries and the repair turn count; 0 for a cache hit).
        repaired: the answer became valid only after the repair turn.
        lost: the request failed for a reason outside the prompt: retriable provider errors (rate
            limit, timeout, connection, server) on every attempt, or an answer still invalid
            after the repair turns. False on success and for a final provider error (a bad
            request, which the prompt may cause).
    """

    request: ChatRequest
    text: str | None
    data: Any
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    error: str | None = None
    attempts: int = 0
    repaired: bool = False
    lost: bool = False

    @property
    def ok(self) -> bool:
        """The request was answered (`error` is None)."""
        return self.error is None
