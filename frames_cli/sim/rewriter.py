"""Simulated rewriter: applies the blueprint's quoted rules, sometimes forgets a rule or pads."""

from __future__ import annotations

import random
import re
from typing import Any, Iterator

from frames_cli.formats.skill import PROTECTED_CLOSE, PROTECTED_OPEN
from frames_cli.sim import reading
from frames_cli.sim.base import SimCall
from frames_cli.sim.matching import sentence_found, sentence_sets

_QUOTED_RULE = re.compile(r'Add the rule: "([^"]+)"')
_OPEN, _CLOSE = PROTECTED_OPEN, PROTECTED_CLOSE
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# The validator's complaint about a rule written twice (evolution.rewrite): the later line's number
# and the repeated sentence (quoted by repr, perhaps clipped with "…"); a model told so keeps the
# first statement and drops the repeated sentence, keeping the rest of its line.
_DUPLICATE = re.compile(r"lines? (?:\d+ and )?(\d+) states? the same rule twice[^:]*: (['\"]).*?\2 / (['\"])(.*?)\3(?=;|$)", re.M)

#: Filler a verbose model adds: true, harmless and costly (the cost objective should reject it).
PADDING = (
    "Read the whole request carefully before acting, and make sure you understand what the customer "
    "wants. Take your time and double-check each step. Be polite, clear and thorough at all times, "
    "and explain your reasoning when it helps the customer."
)


def behave(call: SimCall) -> dict[str, Any]:
    """REWRITE JSON for the `target="true"` block.

    With probability p_forget (p_forget_anchored when `Anchor cases:` is non-empty) drops one
    existing rule sentence outside protected regions; appends each quoted rule of the `Blueprint:`
    block not yet in the body; then with probability p_verbose appends a padding paragraph. On a
    retry that names rules written twice, the repeated sentence of each pair is left out.
    """
    target = next((b for b in reading.skill_blocks(call.prompt) if b.attrs.get("target") == "true"), None)
    if target is None:
        return {"body": ""}
    lines = target.text.split("\n")
    cfg = call.config
    anchored = bool(reading.json_after(call.prompt, "Anchor cases"))
    rng = call.rng(target.name, "rewrite")
    # Forget before adding, so only a rule that was already there can be lost.
    if rng.random() < (cfg.p_forget_anchored if anchored else cfg.p_forget):
        _forget_one(lines, rng)
    existing = sentence_sets(target.text)
    for rule in dict.fromkeys(_quoted_rules(reading.json_after(call.prompt, "Blueprint"))):
        if not sentence_found(rule, existing):
            lines.append(f"- {rule}")
    if rng.random() < cfg.p_verbose:
        lines += ["", PADDING]
    body = "\n".join(lines).strip("\n")
    return {"body": _drop_repeats(body, call.prompt) + "\n"}


def _drop_repeats(body: str, prompt: str) -> str:
    """On a retry that names repeated rules, drop the repeated sentence of each pair from its line
    (1-based body lines), and the line when nothing else is left of it.

    The answer is rebuilt from the same target and blueprint, so its lines are where the rejected
    answer had them; only the last retry message counts (earlier ones were already acted on).
    """
    last_retry = prompt.rsplit("Your rewrite was rejected by the validator:", 1)
    if len(last_retry) < 2:
        return body
    lines = body.split("\n")
    for m in _DUPLICATE.finditer(last_retry[1]):
        number, repeated = int(m.group(1)), m.group(4).removesuffix("…")
        if 0 < number <= len(lines) and lines[number - 1] is not None:
            lines[number - 1] = _without_sentence(lines[number - 1], repeated)
    return "\n".join(line for line in lines if line is not None)


def _without_sentence(line: str, start: str) -> str | None:
    """`line` without its first sentence that begins with `start`; None when no text is left."""
    marker = re.match(r"\s*(?:[-*+]|\d+[.)])?\s*", line).group(0)
    parts = _SENTENCE.split(line[len(marker):])
    kept = [p for i, p in enumerate(parts) if not (p.startswith(start) and all(not q.startswith(start) for q in parts[:i]))]
    if len(kept) == len(parts):  # the quote is not found word for word: the whole line goes, as before
        return None
    return marker + " ".join(kept) if kept else None


def _quoted_rules(blueprint: Any) -> Iterator[str]:
    """Every `Add the rule: "..."` sentence in any string of the blueprint JSON."""
    if isinstance(blueprint, str):
        yield from _QUOTED_RULE.findall(blueprint)
    elif isinstance(blueprint, dict):
        for value in blueprint.values():
            yield from _quoted_rules(value)
    elif isinstance(blueprint, list):
        for value in blueprint:
            yield from _quoted_rules(value)


def _forget_one(lines: list[str], rng: random.Random) -> None:
    """Remove one sentence from a text line outside protected regions (headings and markers kept)."""
    candidates, protected = [], False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped == _OPEN:
            protected = True
        elif stripped == _CLOSE:
            protected = False
        elif not protected and stripped and not stripped.startswith(("#", "<!--", "```")):
            candidates.append(i)
    if not candidates:
        return
    index = rng.choice(candidates)
    parts = _SENTENCE.split(lines[index])
    if len(parts) > 1:
        del parts[rng.randrange(len(parts))]
        lines[index] = " ".join(parts)
    else:
        del lines[index]
