"""Simulated case generator: one case per rule sentence of the policy section in the prompt."""

from __future__ import annotations

import re
from typing import Any

from frames_cli.words import rule_sentences, sentences, tokens
from frames_cli.sim import reading
from frames_cli.sim.base import SimCall

_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_COUNT = re.compile(r"write up to\s+(\d+)\s+cases", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]+")


def behave(call: SimCall) -> dict[str, Any]:
    """GENERATED_CASES JSON: up to `count` cases (the "write up to N cases" of the prompt).

    Each case quotes one rule sentence of the `<policy>` block as evidence; its expected answer is
    the sentence's first number, else its longest word, checked with `contains`. The order of the
    rules is a seeded shuffle, so samples differ.
    """
    found = reading.policy_block(call.prompt)
    if found is None:
        return {"cases": []}
    attrs, section = found
    count_match = _COUNT.search(call.prompt)
    count = int(count_match.group(1)) if count_match else 3
    category = reading.line_value(call.prompt, "Category") or "general"
    rules = rule_sentences(section) or sentences(section)
    call.rng(attrs.get("heading", ""), "order").shuffle(rules)
    cases = []
    for rule in rules[:count]:
        words = tokens(rule)
        if not words:
            continue
        number = _NUMBER.search(rule)
        expected = number.group(0) if number else max(_WORD.findall(rule), key=len)
        topic = attrs.get("heading", "this policy").split(" > ")[-1]
        cases.append(
            {
                "input": {"text": f"A customer asks about {topic.lower()}: what applies to {' '.join(words[:6])}?"},
                "expected": expected,
                "check": {"kind": "contains"},
                "category": category,
                "evidence": [rule],
            }
        )
    return {"cases": cases}
