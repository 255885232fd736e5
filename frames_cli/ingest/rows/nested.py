"""Paths into nested data: dotted field paths with list indexes, and record lists below the top level.

A field path (`--map input=messages.0.content` or ``messages[0].content``) walks objects by key
and lists by index. A record path (`--records seed_examples.questions_and_answers`, ``[*]`` after
a segment allowed and ignored) names where the records sit: every list met on the way is walked,
so an InstructLab ``qna.yaml`` gives one record per question. Each record is read together with
its ancestors: a key the record lacks is looked up in its parent, then the grandparent (the
nearest wins), so `context` of a seed example is a field of each of its questions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

_PART = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]")


def split_path(path: str) -> list[str]:
    """`path` as its segments: ``a.b[0].c`` and ``a.b.0.c`` both give ``["a", "b", "0", "c"]``;
    ``[*]`` gives ``"*"``."""
    return [m.group(1) or m.group(2) for m in _PART.finditer(path)]


def lookup(obj: Any, path: str) -> Any:
    """The value at the dotted `path` in `obj` (a key holding dots as one key wins), or None when
    any segment is absent; a digit segment indexes a list."""
    if isinstance(obj, Mapping) and path in obj:
        return obj[path]
    node = obj
    for part in split_path(path):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def record_segments(path: str) -> list[str]:
    """The keys of a record path, without ``[*]`` and ``*`` markers (lists are always walked).

    Raises:
        ValueError: an empty path.
    """
    parts = [p for p in split_path(path) if p != "*"]
    if not parts:
        raise ValueError("--records needs a path such as seed_examples.questions_and_answers")
    return parts


def with_ancestors(record: Mapping[str, Any], ancestors: list[Mapping[str, Any]]) -> dict[str, Any]:
    """One mapping: the ancestors' keys (nearest last, so it wins) overlaid by the record's own."""
    merged: dict[str, Any] = {}
    for parent in ancestors:
        merged.update(parent)
    merged.update(record)
    return merged


def walk(
    value: Any, segments: list[str], ancestors: list[Mapping[str, Any]]
) -> Iterator[tuple[Any, list[Mapping[str, Any]]]]:
    """(record, its ancestors without the keys on the path) for every record `segments` reach in `value`.

    Lists on the way are walked item by item; a missing key yields nothing.
    """
    if isinstance(value, list):
        for item in value:
            yield from walk(item, segments, ancestors)
        return
    if not segments:
        yield value, ancestors
        return
    if not isinstance(value, Mapping) or segments[0] not in value:
        return
    parent = {k: v for k, v in value.items() if k != segments[0]}
    yield from walk(value[segments[0]], segments[1:], [*ancestors, parent])


def record_lists(value: Any, prefix: str = "", depth: int = 0) -> list[str]:
    """Paths of the lists of objects inside `value` (for an error that says what `--records` could
    name), outermost first, at most four levels deep."""
    found: list[str] = []
    if depth > 4:
        return found
    if isinstance(value, Mapping):
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(child, list) and child and all(isinstance(c, Mapping) for c in child):
                found.append(path)
                for item in child[:3]:
                    found.extend(p for p in record_lists(item, path, depth + 1) if p not in found)
            elif isinstance(child, Mapping):
                found.extend(record_lists(child, path, depth + 1))
    return found


def node_lines(node: Any, segments: list[str]) -> Iterator[int]:
    """The 1-based start line of each record `segments` reach in the YAML node tree `node`, in the
    order `walk` yields them from the constructed value (a repeated key, which YAML resolves to
    its last value, is read the same way here)."""
    import yaml

    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from node_lines(item, segments)
        return
    if not segments:
        yield node.start_mark.line + 1
        return
    if not isinstance(node, yaml.MappingNode):
        return
    matches = [v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == segments[0]]
    if matches:
        yield from node_lines(matches[-1], segments[1:])
