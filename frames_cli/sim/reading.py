"""How the simulator reads prompts: the conventions of docs/ARCHITECTURE.md, parsed back."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# Prompts run to tens of KB and every simulated call reads its own, so each reader first jumps to its
# literal with str.find / rfind (no per-character regex work on the rest of the prompt) and applies
# its pattern there only; the result is the same as the pattern applied to the whole prompt.
_CASE_ID_LABEL = "Case id:"
_CASE_ID = re.compile(r"Case id: *(\S+) *$", re.MULTILINE)  # at the start of a line
_BLOCK_OPEN = re.compile(r"<skill((?: +[a-z_-]+=\"[^\"]*\")*)>")
_BLOCK_CLOSE = "</skill>"
_FENCE_CLOSE = "\n```"
_ATTR = re.compile(r'([a-z_-]+)="([^"]*)"')
_CATALOG_MARK = " — "
_CATALOG_LINE = re.compile(r"^(?:- )?(\S+): ([a-z0-9]+(?:-[a-z0-9]+)*) — (.*)$", re.MULTILINE)
_POLICY = re.compile(r"<policy((?: +[a-z_-]+=\"[^\"]*\")*)>\n?(.*?)\n?</policy>", re.DOTALL)


@dataclass(frozen=True)
class Block:
    """One `<skill ...>` block: its attributes (name, id, target, description) and inner text."""

    attrs: dict[str, str]
    text: str

    @property
    def name(self) -> str:
        """The block's `name` attribute ("" when missing)."""
        return self.attrs.get("name", "")


def case_id(prompt: str) -> str | None:
    """The id on the last `Case id: <id>` line (executor and judge prompts), or None."""
    at = len(prompt)
    while (at := prompt.rfind(_CASE_ID_LABEL, 0, at)) >= 0:
        if at == 0 or prompt[at - 1] == "\n":
            match = _CASE_ID.match(prompt, at)
            if match:
                return match.group(1)
    return None


def skill_blocks(prompt: str) -> list[Block]:
    """Every `<skill ...>` … `</skill>` block, in order.

    A block's text runs to the first `</skill>` after its opening tag, without one newline right
    after the tag and one right before the closing tag.
    """
    blocks, at = [], 0
    while (opening := _BLOCK_OPEN.search(prompt, at)) is not None:
        end = prompt.find(_BLOCK_CLOSE, opening.end())
        if end < 0:
            break  # no later opening tag has a closing one either
        text = prompt[opening.end() : end]
        text = text[1:] if text.startswith("\n") else text
        text = text[:-1] if text.endswith("\n") else text
        blocks.append(Block(dict(_ATTR.findall(opening.group(1))), text))
        at = end + len(_BLOCK_CLOSE)
    return blocks


def catalog(prompt: str) -> list[tuple[str, str, str]]:
    """The executor catalog lines `id: name — description` as (id, name, description)."""
    return _CATALOG_LINE.findall("\n".join(line for line in prompt.split("\n") if _CATALOG_MARK in line))


def policy_block(prompt: str) -> tuple[dict[str, str], str] | None:
    """The first `<policy file=.. heading=..>` block (generator, coldstart): attributes and section text."""
    blocks = policy_blocks(prompt)
    return blocks[0] if blocks else None


def policy_blocks(prompt: str) -> list[tuple[dict[str, str], str]]:
    """Every `<policy ...>` block (a diagnoser's retrieved passages), in order: attributes and text."""
    return [(dict(_ATTR.findall(m.group(1))), m.group(2)) for m in _POLICY.finditer(prompt)]


def without_block(prompt: str, opening: str, closing: str) -> str:
    """`prompt` without the first block that starts with a line `opening` and ends with the next
    line `closing`, and without the blank line after it (the prompt as it reads without the block);
    unchanged when there is no such block."""
    pattern = rf"^{re.escape(opening)}\n.*?^{re.escape(closing)}\n\n?"
    return re.sub(pattern, "", prompt, count=1, flags=re.MULTILINE | re.DOTALL)


def block_text(prompt: str, opening: str, closing: str) -> str:
    """The text between a line `opening` and the next line `closing` (the first such block); "" when absent."""
    match = re.search(rf"^{re.escape(opening)}\n(.*?)^{re.escape(closing)}$", prompt, flags=re.MULTILINE | re.DOTALL)
    return match.group(1) if match else ""


def json_after(prompt: str, heading: str, *, last: bool = False) -> Any:
    """The JSON of the first (`last`: the last) ```json fence after a line `<heading>:`; None when
    absent or broken.

    The fence's body runs to the first line that starts with ``` (a `\n```` after the opening).
    """
    found: Any = None
    for opening in _line_matches(prompt, f"{heading}:", _fence_opening(heading)):
        end = prompt.find(_FENCE_CLOSE, opening.end())
        if end >= 0:
            try:
                found = json.loads(prompt[opening.end() : end])
            except ValueError:
                found = None
            if not last:
                return found
    return found


def line_value(prompt: str, label: str) -> str | None:
    """The rest of the first line `<label>: value`, or None."""
    match = next(_line_matches(prompt, f"{label}:", _labelled_line(label)), None)
    return match.group(1).strip() if match else None


def _line_matches(prompt: str, literal: str, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """The matches of `pattern` (which begins with `literal`) at line starts, in order: where a
    MULTILINE search for `^` + pattern would look, without trying every other position."""
    at = 0
    while (at := prompt.find(literal, at)) >= 0:
        if at == 0 or prompt[at - 1] == "\n":
            match = pattern.match(prompt, at)
            if match:
                yield match
        at += 1


# One pattern per heading or label the roles read (a handful of constants), compiled once.
@functools.lru_cache(maxsize=64)
def _fence_opening(heading: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(heading)}:\s*\n```json\n")


@functools.lru_cache(maxsize=64)
def _labelled_line(label: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(label)}: *(.+)$", re.MULTILINE)
