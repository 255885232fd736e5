"""How the simulator reads prompts: the conventions of docs/ARCHITECTURE.md, parsed back."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Prompts run to tens of KB and every simulated call reads its own, so each reader first jumps to its
# literal with str.find / rfind (no per-character regex work on the rest of the prompt) and applies
# its pattern there only; the result is the same as the pattern applied to the whole prompt.
_CASE_ID_LABEL = "Case id:"
_CASE_ID = re.compile(r"Case id: *(\S+) *$", re.MULTILINE)  # at the start of a line
_BLOCK_OPEN = re.compile(r"<skill((?: +[a-z_-]+=\"[^\"]*\")*)>")
_BLOCK_CLOSE = "</skill>"
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
    """The `<policy file=.. heading=..>` block (generator, coldstart): attributes and section text."""
    match = _POLICY.search(prompt)
    return (dict(_ATTR.findall(match.group(1))), match.group(2)) if match else None


def json_after(prompt: str, heading: str) -> Any:
    """The JSON of the first ```json fence after the line `<heading>:`; None when absent or broken."""
    match = re.search(rf"^{re.escape(heading)}:\s*\n```json\n(.*?)\n```", prompt, re.MULTILINE | re.DOTALL)
    if not match:
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None


def line_value(prompt: str, label: str) -> str | None:
    """The rest of the first line `<label>: value`, or None."""
    match = re.search(rf"^{re.escape(label)}: *(.+)$", prompt, re.MULTILINE)
    return match.group(1).strip() if match else None
