"""How the simulator reads prompts: the conventions of docs/ARCHITECTURE.md, parsed back."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_CASE_ID = re.compile(r"^Case id: *(\S+) *$", re.MULTILINE)
_BLOCK = re.compile(r"<skill((?: +[a-z_-]+=\"[^\"]*\")*)>\n?(.*?)\n?</skill>", re.DOTALL)
_ATTR = re.compile(r'([a-z_-]+)="([^"]*)"')
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
    found = _CASE_ID.findall(prompt)
    return found[-1] if found else None


def skill_blocks(prompt: str) -> list[Block]:
    """Every `<skill ...>` … `</skill>` block, in order."""
    return [Block(dict(_ATTR.findall(attrs)), text) for attrs, text in _BLOCK.findall(prompt)]


def catalog(prompt: str) -> list[tuple[str, str, str]]:
    """The executor catalog lines `id: name — description` as (id, name, description)."""
    return _CATALOG_LINE.findall(prompt)


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
