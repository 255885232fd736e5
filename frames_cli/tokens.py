"""Token estimates where no model tokenizer is at hand (section sizes, simulator and spool usage)."""

from __future__ import annotations

import math

#: Characters per token: OpenAI's rule of thumb for English text ("one token ≈ 4 characters").
CHARS_PER_TOKEN = 4


def approx_tokens(text: str) -> int:
    """Token count of `text`, estimated as ⌈characters / 4⌉ (cheap; within ~20 % of BPE on English)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)
