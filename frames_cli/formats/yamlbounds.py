"""Bounds on a YAML or JSON text before it is parsed: size, nesting depth and the values aliases expand to.

PyYAML composes an alias as a second reference to the same node, so a "billion laughs" text of a
few hundred bytes composes in microseconds and explodes only later, when something walks it as a
tree (`repr`, `yaml.serialize`, JSON encoding, the simulator's prompts): 179 s and 2.7 GB before a
MemoryError in issue 15. Deep nesting overflows the pure-Python composer's recursion. Both are
found here on PyYAML's event stream, which is read iteratively, in one linear pass. Python's json
module recurses too (a JSON Lines case nested 100,000 deep raised RecursionError): `json_too_deep`
counts brackets outside strings first.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from frames_cli.errors import InputError, Location

#: Collections nested inside each other at most; real frames files use fewer than 10.
MAX_DEPTH = 64
#: Values (scalars and collections) that aliases may add to a document once followed; the values
#: written out are bounded by the file's size, these are not.
MAX_VALUES = 100_000


def check_yaml_bounds(
    text: str, path: Path | str, *, error: type[InputError] = InputError, max_bytes: int | None = None,
    max_depth: int = MAX_DEPTH, max_values: int = MAX_VALUES,
) -> None:
    """Refuse a YAML text that is too large, too deeply nested or an alias bomb.

    Args:
        max_bytes: longest text in UTF-8 bytes (None = no limit).
        max_depth / max_values: see MAX_DEPTH and MAX_VALUES (values added by aliases).

    Raises:
        `error`: `path:line: ...` at the collection too deep or the alias whose expansion passes
            `max_values`; `path: ...` for the size. A syntax error is left to the composer, which
            reports it with its own mark.
    """
    if max_bytes is not None:
        size = len(text.encode("utf-8"))
        if size > max_bytes:
            raise error(f"file is {size} bytes; the limit is {max_bytes}", Location(path))
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    expansion = _Expansion()
    try:
        for event in yaml.parse(text, Loader=loader):
            opens = isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent))
            if opens and expansion.depth > max_depth:
                raise error(f"YAML nested more than {max_depth} levels deep", _loc(path, event))
            if expansion.add(event) > max_values:
                raise error(f"YAML aliases expand to more than {max_values} values (an alias bomb?)", _loc(path, event))
    except yaml.YAMLError:
        return


class _Expansion:
    """The values a YAML event stream holds once its aliases are followed, counted in one pass."""

    def __init__(self) -> None:
        # Per open collection: values inside it so far. Per anchor: the values its node expands to.
        self.open_counts: list[int] = [0]
        self.anchors: dict[str, int] = {}
        self.open_anchors: list[str | None] = []
        self.added = 0

    @property
    def depth(self) -> int:
        """Collections open, plus one for the document."""
        return len(self.open_counts)

    def add(self, event: yaml.Event) -> int:
        """Count `event`; the values aliases added so far."""
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            self.open_counts.append(0)
            self.open_anchors.append(event.anchor)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            size = self.open_counts.pop() + 1
            anchor = self.open_anchors.pop()
            if anchor is not None:
                self.anchors[anchor] = size
            self.open_counts[-1] += size
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                self.anchors[event.anchor] = 1
            self.open_counts[-1] += 1
        elif isinstance(event, yaml.AliasEvent):
            grown = self.anchors.get(event.anchor or "", 1)
            self.open_counts[-1] += grown
            self.added += grown
        return self.added


def _loc(path: Path | str, event: yaml.Event) -> Location:
    mark = event.start_mark
    return Location(path, mark.line + 1 if mark is not None else None)


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def json_too_deep(text: str, max_depth: int = MAX_DEPTH) -> str | None:
    """Why a JSON text nests too deep to parse safely (arrays and objects more than `max_depth`
    levels inside each other), or None. Strings are skipped, so brackets in text do not count;
    linear in the text's length."""
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
        if deepest > max_depth:
            return f"JSON nested more than {max_depth} levels deep"
    return None
