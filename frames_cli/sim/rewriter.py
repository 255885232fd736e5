"""Simulated rewriter: adds the blueprint's rules, sometimes forgets a rule or states one twice."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

from frames_cli.formats.protected import PROTECTED_CLOSE, PROTECTED_OPEN
from frames_cli.llm.messages.conventions import CONDENSE, ERRORS_HEADING
from frames_cli.sim import reading
from frames_cli.sim.base import SimCall
from frames_cli.sim.matching import sentence_found, sentence_sets

_OPEN, _CLOSE = PROTECTED_OPEN, PROTECTED_CLOSE
_SENTENCE = re.compile(r"(?<=[.!?])\s+")

#: How a verbose model restates a rule it has just written. The real-model trial's rewrites
#: (../shared/data/real-model-trial/, 7 rewriter answers) add no generic filler; their excess is the
#: same rule written again in other words (3 of the 7), which the duplicate check refuses.
RESTATE = "In other words: {rule}"


def behave(call: SimCall) -> dict[str, Any]:
    """REWRITE JSON for the `target="true"` block.

    With probability p_forget (p_forget_anchored when `Anchor cases:` is non-empty) drops one
    existing rule sentence outside protected regions; appends each rule of the `Blueprint:` block's
    changes (their `rules`) not yet in the body; then with probability p_verbose states the first rule it added a
    second time (RESTATE). Asked to condense (CONDENSE), it first drops repeated lines and
    formatting (`_condensed`). On a retry that names rules written twice, the repeated sentence of
    each pair is left out.
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
    if CONDENSE in call.prompt:
        lines = _condensed(lines)
    existing = sentence_sets(target.text)
    added = [
        r for r in dict.fromkeys(_blueprint_rules(reading.json_after(call.prompt, "Blueprint")))
        if not sentence_found(r, existing)
    ]
    lines += [f"- {rule}" for rule in added]
    if rng.random() < cfg.p_verbose and added:
        lines.append("- " + RESTATE.format(rule=added[0][:1].lower() + added[0][1:]))
    body = "\n".join(lines).strip("\n")
    return {"body": _drop_repeats(body, call.prompt) + "\n"}


def _condensed(lines: list[str]) -> list[str]:
    """What this model does when asked to condense: it drops a line that restates an earlier one
    (the same words, `sentence_found`), Markdown emphasis and runs of blank lines. It never rewords a
    rule, so a condensed skill saves only what repetition and formatting cost."""
    out: list[str] = []
    seen: list[frozenset[str]] = []
    protected = False
    for line in lines:
        stripped = line.strip()
        protected = (protected or stripped == _OPEN) and stripped != _CLOSE
        if not protected and stripped and not stripped.startswith(("#", "<!--", "```")):
            text = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", stripped).removeprefix(RESTATE.split("{")[0])
            if sentence_found(text, seen):
                continue
            seen.extend(sentence_sets(text))
            line = line.replace("**", "")
        if not stripped and out and not out[-1].strip():
            continue
        out.append(line)
    return out


def _drop_repeats(body: str, prompt: str) -> str:
    """On a retry whose errors name rules written twice ("duplicate-rule"), drop each repeated
    sentence (the error's `text`) from its line (the error's 1-based body `line`), and the line when
    nothing else is left of it; a model told so keeps the first statement and the rest of the line.

    The answer is rebuilt from the same target and blueprint, so its lines are where the rejected
    answer had them; only the last retry's errors count (earlier ones were already acted on).
    """
    errors = reading.json_after(prompt, ERRORS_HEADING, last=True)
    if not isinstance(errors, list):
        return body
    lines: list[str | None] = list(body.split("\n"))
    for error in errors:
        if not isinstance(error, dict) or error.get("kind") != "duplicate-rule":
            continue
        number, repeated = error.get("line"), str(error.get("text", ""))
        if isinstance(number, int) and 0 < number <= len(lines) and repeated:
            line = lines[number - 1]
            if line is not None:
                lines[number - 1] = _without_sentence(line, repeated)
    return "\n".join(line for line in lines if line is not None)


def _without_sentence(line: str, start: str) -> str | None:
    """`line` without its first sentence that begins with `start`; None when no text is left."""
    lead = re.match(r"\s*(?:[-*+]|\d+[.)])?\s*", line)
    marker = lead.group(0) if lead else ""  # always a match: every part of the pattern is optional
    parts = _SENTENCE.split(line[len(marker):])
    kept = [
        p for i, p in enumerate(parts) if not (p.startswith(start) and all(not q.startswith(start) for q in parts[:i]))
    ]
    if len(kept) == len(parts):  # the quote is not found word for word: the whole line goes, as before
        return None
    return marker + " ".join(kept) if kept else None


def _blueprint_rules(blueprint: Any) -> Iterator[str]:
    """The `rules` of every change of the blueprint JSON, in order (a contradiction lists none: this
    model then leaves the rule as the skill states it)."""
    changes = blueprint.get("changes") if isinstance(blueprint, dict) else None
    for change in changes if isinstance(changes, list) else ():
        rules = change.get("rules") if isinstance(change, dict) else None
        yield from (r for r in rules if isinstance(r, str) and r.strip()) if isinstance(rules, list) else ()


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
