"""Readers of JSON Lines, JSON and YAML feedback files: one located record per object, nested or not."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError, Location
from frames_cli.formats.problems import Problem
from frames_cli.ingest.rows import nested
from frames_cli.ingest.rows.fields import FieldResolver, ReadResult, Record, plain, make_record, unused_columns

def warn_once(problems: list[Problem], warned: set[str], location: Location, warnings: list[str]) -> None:
    """Add each warning the first time it is seen in a file: one misspelt key is one warning, not one per row."""
    for warning in warnings:
        if warning not in warned:
            warned.add(warning)
            problems.append(Problem(location, warning, "warning"))


@dataclass(frozen=True)
class Unreadable:
    """A row its format's parser rejected; `reason` goes into the problem message."""

    reason: str


def object_records(rows: Iterable[tuple[Location, Any]], resolver: FieldResolver, kind: str) -> ReadResult:
    """Records from parsed rows of a JSON Lines, JSON or YAML file: (location, object or Unreadable).

    A row that is Unreadable or not a mapping (`kind` names what was expected, e.g. "a JSON
    object") is an error and skipped. Columns are resolved in the row's own key order, once per
    distinct key list; each close-spelling warning is given once per file.
    """
    records: list[Record] = []
    problems: list[Problem] = []
    resolved: dict[tuple[str, ...], dict[str, str]] = {}
    warned: set[str] = set()
    keys_seen: dict[str, None] = {}
    for location, obj in rows:
        if isinstance(obj, Unreadable):
            problems.append(Problem(location, f"{obj.reason}; skipped"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(location, f"expected {kind}, got {type(obj).__name__}; skipped"))
            continue
        keys = tuple(map(str, obj))
        keys_seen.update(dict.fromkeys(keys))
        if keys not in resolved:
            resolved[keys], warnings = resolver.resolve(keys)
            warn_once(problems, warned, location, warnings)
        records.append(make_record(obj, resolved[keys], location))
    unused, hints = unused_columns(resolver, keys_seen, resolved.values())
    return ReadResult(records, problems, list(resolver.used.values()), unused, hints)


def jsonl_objects(path: Path, lines: list[str]) -> Iterator[tuple[Location, Any]]:
    """(location, parsed value or Unreadable) for each non-blank line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield Location(path, number), json.loads(line)
        except json.JSONDecodeError as exc:
            yield Location(path, number), Unreadable(f"invalid JSON: {exc.msg} (column {exc.colno})")


def json_array_items(path: Path, text: str) -> list[tuple[Any, Location]]:
    """The items of the JSON array `text` with the line where each starts.

    Raises:
        InputError: not a JSON array, or invalid JSON (`path:line`; one bad item spoils the array,
            whose end can no longer be found).
    """
    decoder = json.JSONDecoder()
    blank = re.compile(r"\s*")

    def fail(message: str, pos: int) -> InputError:
        return InputError(message, Location(path, text.count("\n", 0, pos) + 1))

    pos = blank.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("[", pos):
        raise fail("expected a JSON array", pos)
    pos = blank.match(text, pos + 1).end()  # type: ignore[union-attr]
    items: list[tuple[Any, Location]] = []
    while not text.startswith("]", pos):
        try:
            item, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise fail(f"invalid JSON: {exc.msg}", exc.pos) from None
        items.append((item, Location(path, text.count("\n", 0, pos) + 1)))
        pos = blank.match(text, end).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos = blank.match(text, pos + 1).end()  # type: ignore[union-attr]
        elif not text.startswith("]", pos):
            raise fail("expected `,` or `]` after an item", pos)
    return items


def nested_rows(items: Iterable[tuple[Any, Location]], records: str | None) -> Iterator[tuple[Location, Any]]:
    """(location, record with its ancestors' fields) below each top-level item, or the items as they are."""
    if records is None:
        for item, location in items:
            yield location, item
        return
    segments = nested.record_segments(records)
    for item, location in items:
        for record, ancestors in nested.walk(item, segments, []):
            yield location, nested.with_ancestors(record, ancestors) if isinstance(record, Mapping) else record


def read_json(path: Path, lines: list[str], resolver: FieldResolver, records: str | None) -> ReadResult:
    text = "\n".join(lines)
    if text.lstrip().startswith("["):
        items = json_array_items(path, text)
    else:
        try:
            items = [(json.loads(text), Location(path, 1))]
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", Location(path, exc.lineno)) from None
        if records is None and isinstance(items[0][0], dict) and not _looks_like_record(items[0][0]):
            lists = nested.record_lists(items[0][0])
            if lists:
                raise InputError("the file is one JSON object holding lists of records; name the list with --records "
                                 f"(lists here: {', '.join(lists[:6])})", Location(path, 1))
    return object_records(nested_rows(items, records), resolver, "a JSON object")


def _looks_like_record(obj: Mapping[str, Any]) -> bool:
    """A top-level object is a record itself when some value is not a list of objects (a SWE-agent
    ``.traj`` holds `trajectory` beside `info`); only lists of objects means a container of records."""
    return any(not (isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v)) for v in obj.values())


def _yaml_objects(path: Path, loader: Any, root: Any) -> Iterator[tuple[Location, Any]]:
    """(location, constructed value or Unreadable) for each item of the YAML sequence node `root`."""
    import yaml

    for node in root.value:
        location = Location(path, node.start_mark.line + 1)
        try:
            yield location, loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            yield location, Unreadable(f"invalid YAML value: {getattr(exc, 'problem', None) or exc}")
        except (ValueError, KeyError, AttributeError, TypeError):
            # PyYAML's constructors for explicit tags raise plain errors on a malformed scalar
            # (`!!int x` ValueError, `!!bool maybe` KeyError, `!!timestamp x` AttributeError).
            yield (
                location,
                Unreadable("invalid YAML value: a scalar its explicit tag (such as !!int or !!timestamp) cannot hold"),
            )


def _yaml_nested(path: Path, loader: Any, root: Any, records: str) -> Iterator[tuple[Location, Any]]:
    """(location, record with its ancestors' fields) for each record the path `records` reaches."""
    import yaml

    try:
        value = plain(loader.construct_object(root, deep=True))
    except (yaml.YAMLError, ValueError, KeyError, AttributeError, TypeError) as exc:
        raise InputError(
            f"invalid YAML value: {getattr(exc, 'problem', None) or exc}", Location(path, root.start_mark.line + 1)
        ) from None
    segments = nested.record_segments(records)
    lines = list(nested.node_lines(root, segments))
    found = list(nested.walk(value, segments, []))
    if len(lines) != len(found):
        lines = [root.start_mark.line + 1] * len(found)
    for line, (record, ancestors) in zip(lines, found):
        yield Location(path, line), nested.with_ancestors(record, ancestors) if isinstance(record, Mapping) else record


def read_yaml(path: Path, lines: list[str], resolver: FieldResolver, records: str | None) -> ReadResult:
    import yaml

    text = "\n".join(lines)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise InputError(
                f"invalid YAML: {exc.problem or exc}", Location(path, mark.line + 1 if mark else None)
            ) from None
        except yaml.reader.ReaderError as exc:
            # Raised for characters YAML forbids (NUL, control codes), with a character offset.
            line = text.count("\n", 0, exc.position) + 1
            raise InputError(
                f"invalid YAML: character {exc.character!r} is not allowed", Location(path, line)
            ) from None
        if root is None:
            return ReadResult([], [])
        if records is not None:
            return object_records(_yaml_nested(path, loader, root, records), resolver, "a mapping")
        if not isinstance(root, yaml.SequenceNode):
            hint = ""
            if isinstance(root, yaml.MappingNode):
                lists = nested.record_lists(plain(loader.construct_object(root, deep=True)))
                hint = (
                    "; the records sit below the top: name their list with --records (lists here: "
                    f"{', '.join(lists[:6])})"
                    if lists
                    else ""
                )
            raise InputError("expected a YAML list of records" + hint, Location(path, root.start_mark.line + 1))
        return object_records(_yaml_objects(path, loader, root), resolver, "a mapping")
    finally:
        loader.dispose()


def sniff_json(data: bytes) -> str:
    """"json" when a JSON Lines file is in fact one JSON document spanning lines (an array as
    downloaded, or a pretty-printed object), else "jsonl"."""
    body = data.removeprefix(b"\xef\xbb\xbf").lstrip()
    head = body[:1]
    if head == b"[":
        return "json"
    if head == b"{":
        first = body.split(b"\n", 1)[0]
        try:
            json.loads(first)
        except ValueError:
            return "json"
    return "jsonl"
