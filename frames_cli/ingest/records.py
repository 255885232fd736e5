"""Reading messy feedback files (CSV, TSV, JSON Lines, YAML) into located records with a field mapping.

Every converter that reads rows written by people goes through `read_records`, so they all treat the
same mess the same way:

- Each physical line is decoded on its own: UTF-8 first (a leading BOM is dropped, as spreadsheet
  exports add one); in a line that is not valid UTF-8 only the bad bytes are read as Latin-1
  (Windows-1252 for 0x80–0x9F) and a *warning* names the line, because such files are usually one
  hand-edited row pasted from an old system, and the row is still good.
- CSV is parsed strictly: a row with an unclosed or stray quote is one bad row, and parsing
  restarts on the next line instead of reading the rest of the file into one cell.
- Cell and value text is stripped; an empty string counts as absent ("empty comments").
- Field names are matched to canonical names through `--map FIELD=COLUMN`, then the converter's
  aliases, then (with a warning) a close spelling of an alias (``coment`` → ``comment``), since
  column headers are typed by hand.
- A row that cannot be read (bad JSON, a CSV row with more cells than the header, a YAML item that is
  not a mapping) becomes a `Problem` with file and line and is skipped; the others are returned.
- A CSV file's delimiter is sniffed (`csv.Sniffer`, among ``, ; TAB |``): spreadsheets set to a
  European locale save semicolon-separated ".csv" files.
- JSON files (`.json`, or a JSON Lines file that is one JSON array) hold an array of records, or
  one object that is a record itself (a SWE-agent ``.traj``) or holds them (`records` path).
- Records may sit below the top level (`records`, see `ingest.nested`): each is read with its
  ancestors' fields, so a mapping can name a parent's key.
- What was read is kept for the ingest's account: the field → column choices (`ReadResult.fields`)
  and the columns no field used (`ReadResult.unused`, with `FieldResolver.hint`).
"""

from __future__ import annotations

import csv
import datetime as _dt
import difflib
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from frames_cli.errors import InputError, Location
from frames_cli.formats.problems import Problem
from frames_cli.ingest import nested
from frames_cli.ingest.account import Account, AsPrior, FieldUse

T = TypeVar("T")

#: Suffix → reader format; `--format` overrides it.
FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".yaml": "yaml", ".yml": "yaml"}
_SNIFF_DELIMITERS = ",;\t|"

# difflib ratio above which a header is taken for a misspelt alias; 0.8 accepts one wrong or
# missing letter in a 5-letter word ("coment", "catgory") but not a different word ("content").
_CLOSE_HEADER = 0.8


@dataclass
class Record:
    """One row or object of a feedback file.

    Attributes:
        values: canonical field name → value, only the fields present and non-empty.
        location: the file and the 1-based line where the record starts.
        extra: the other columns/keys of the row, unmapped (kept for notes, never lost silently).
    """

    values: dict[str, Any]
    location: Location
    extra: dict[str, Any] = field(default_factory=dict)

    def ref(self) -> str:
        """``path:line``, with the row's own id in brackets when it has one: a case's source reference."""
        own = self.text("id")
        return f"{self.location.path}:{self.location.line}" + (f" ({own})" if own else "")

    def text(self, name: str) -> str | None:
        """The value of `name` as a string (JSON for lists and objects), or None when absent."""
        value = self.values.get(name)
        if value is None:
            return None
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass
class ReadResult:
    """What `read_records` found: the readable records and one problem per unreadable row or warning.

    Attributes:
        fields: the field → column choices made, in the order first made.
        unused: columns (top-level keys) no field read, in file order.
        hints: unused column → a `--map FIELD=COLUMN` suggestion, for those that look like a field.
    """

    records: list[Record]
    problems: list[Problem]
    fields: list[FieldUse] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    hints: dict[str, str] = field(default_factory=dict)


def parse_mapping(specs: Sequence[str], known: Sequence[str]) -> dict[str, str]:
    """Parse ``FIELD=COLUMN`` pairs (each spec may hold several, comma-separated).

    `known` lists the canonical field names; a name ending in ``.`` (like ``fields.``) is a prefix
    that accepts any suffix (``fields.user_id=uid``). COLUMN may be a dotted path into JSON objects.

    Returns:
        canonical field → column name.

    Raises:
        InputError: a pair without ``=``, an empty side, or an unknown field (the message lists them).
    """
    mapping: dict[str, str] = {}
    for spec in specs:
        for pair in filter(None, (p.strip() for p in spec.split(","))):
            name, sep, column = (part.strip() for part in pair.partition("="))
            if not sep or not name or not column:
                raise InputError(f"--map expects FIELD=COLUMN, got {pair!r}")
            if name not in known and not any(k.endswith(".") and name.startswith(k) and name != k for k in known):
                # A prefix such as "fields." stands for any field below it: shown as "fields.NAME".
                names = (f"{k}NAME" if k.endswith(".") else k for k in known)
                raise InputError(f"--map: unknown field {name!r} (known: {', '.join(names)})")
            mapping[name] = column
    return mapping


def _norm_key(key: str) -> str:
    return re.sub(r"[\s\-]+", "_", str(key).strip().casefold())


@dataclass
class FieldResolver:
    """Finds, for a set of column names, which column holds each canonical field.

    Attributes:
        mapping: canonical field → column given by the user (`--map`); wins over aliases.
        aliases: canonical field → accepted column names, most likely first (normalised spelling).
    """

    mapping: Mapping[str, str]
    aliases: Mapping[str, Sequence[str]]
    used: dict[str, FieldUse] = field(default_factory=dict, init=False)

    def hint(self, column: str, taken: Sequence[str]) -> str | None:
        """A ``--map FIELD=COLUMN`` suggestion for an unused `column` whose name shares a word with
        an alias of a field no column holds (``agent_decision`` → ``output``, as ``agent_output``),
        or None. An identifier column (``...id``) only ever suggests `id`."""
        words = set(_norm_key(re.sub(r"(?<=[a-z])(?=[A-Z])", "_", str(column))).split("_")) - {""}
        identifier = _norm_key(column).endswith("id")
        for name, names in self.aliases.items():
            if name in taken or (identifier and name != "id"):
                continue
            if any(words & (set(_norm_key(alias).split("_")) - {""}) for alias in names):
                return f"--map {name}={column}"
        return None

    def resolve(self, columns: Sequence[str]) -> tuple[dict[str, str], list[str]]:
        """Match `columns` (a header or an object's keys) to canonical fields.

        Returns:
            (canonical → column, warnings about close-spelling matches). Prefix fields given in the
            mapping (``fields.x``) are kept as given; the caller reads dotted paths itself.
        """
        by_norm = {_norm_key(c): c for c in columns}
        found = {name: by_norm.get(_norm_key(column), column) for name, column in self.mapping.items()}
        for name, column in found.items():
            self.used.setdefault(name, FieldUse(name, column, "--map"))
        warnings: list[str] = []
        # Exact aliases first for every field, so a misspelling never steals a column another
        # field names exactly; then close spellings among the columns still free.
        for exact in (True, False):
            for name, names in self.aliases.items():
                if name in found:
                    continue
                free = {n: c for n, c in by_norm.items() if c not in found.values()}
                column = _pick(names, free, exact)
                if column is not None:
                    found[name] = column
                    self.used.setdefault(name, FieldUse(name, column, "name" if exact else "close spelling"))
                    if not exact:
                        warnings.append(f"column {column!r} read as `{name}` (closest known name; use --map to be explicit)")
        return found, warnings


def _pick(names: Sequence[str], free: Mapping[str, str], exact: bool) -> str | None:
    """The first free column (normalised name → column) equal to, or else close to, one of `names`."""
    for alias in map(_norm_key, names):
        if exact and alias in free:
            return free[alias]
        if not exact:
            # An identifier is never a misspelt content field: Claude Code's `messageId` is 0.82
            # close to `messages`.
            same_kind = [n for n in free if n.endswith("id") == alias.endswith("id")]
            close = difflib.get_close_matches(alias, same_kind, n=1, cutoff=_CLOSE_HEADER)
            if close:
                return free[close[0]]
    return None


def _plain(value: Any) -> Any:
    """`value` with YAML's dates and times as ISO text, so every record is plain JSON data."""
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _clean(value: Any) -> Any:
    """Strip strings; empty strings and empty containers become None (absent)."""
    value = _plain(value)
    if isinstance(value, str):
        value = value.strip()
        return value or None
    if isinstance(value, (list, dict)) and not value:
        return None
    return value


def _legacy(byte: int) -> str:
    """One byte of a legacy Western file: Windows-1252 (its 0x80–0x9F are quotes, dashes, €, where
    Latin-1 has control codes YAML and terminals reject), else Latin-1 for the five bytes it leaves
    undefined."""
    try:
        return bytes([byte]).decode("cp1252")
    except UnicodeDecodeError:
        return bytes([byte]).decode("latin-1")


def _decode_mixed(raw: bytes) -> tuple[str, int]:
    """Decode UTF-8, reading only the invalid bytes as Latin-1 / Windows-1252 (a row pasted from an
    old system keeps its other UTF-8 text intact). Returns (text, number of bytes read so)."""
    parts: list[str] = []
    bad = 0
    while True:
        try:
            parts.append(raw.decode("utf-8"))
            return "".join(parts), bad
        except UnicodeDecodeError as exc:
            parts.append(raw[: exc.start].decode("utf-8"))
            parts.append("".join(_legacy(b) for b in raw[exc.start : exc.end]))
            bad += exc.end - exc.start
            raw = raw[exc.end :]


def decode_lines(path: Path, data: bytes) -> tuple[list[str], list[Problem]]:
    """Split `data` into lines (without line ends) and decode each, invalid UTF-8 bytes as Latin-1.

    Returns:
        (the lines, one warning per line that was read as Latin-1).
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines: list[str] = []
    problems: list[Problem] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        text, bad = _decode_mixed(raw.removesuffix(b"\r"))
        lines.append(text)
        if bad:
            problems.append(Problem(Location(path, number), f"{bad} byte(s) not UTF-8; read as Latin-1", "warning"))
    if lines and lines[-1] == "":
        lines.pop()
    return lines, problems


def _record(obj: Mapping[str, Any], columns: dict[str, str], location: Location) -> Record:
    values = {name: _clean(nested.lookup(obj, column)) for name, column in columns.items()}
    used = {nested.split_path(c)[0] if c not in obj else c for c in columns.values() if c}
    extra = {str(k): v for k, v in obj.items() if k not in used and _clean(v) is not None}
    return Record({k: v for k, v in values.items() if v is not None}, location, extra)


def _warn_once(problems: list[Problem], warned: set[str], location: Location, warnings: list[str]) -> None:
    """Add each warning the first time it is seen in a file: one misspelt key is one warning, not one per row."""
    for warning in warnings:
        if warning not in warned:
            warned.add(warning)
            problems.append(Problem(location, warning, "warning"))


def _csv_rows(lines: list[str], first: int, delimiter: str) -> Iterator[tuple[int, list[str] | csv.Error]]:
    """(start line, cells or the csv error) for each record from physical line `first` on.

    Strict parsing, so an unclosed quote is an error instead of silently swallowing every later row
    into one cell; after an error, parsing restarts on the line after the bad record's first line.
    """
    while first <= len(lines):
        # Line ends are given back so quoted cells spanning lines keep their line breaks.
        reader = csv.reader((line + "\n" for line in lines[first - 1 :]), delimiter=delimiter, strict=True)
        start = first
        try:
            for row in reader:
                yield start, row
                start = first + reader.line_num
            return
        except csv.Error as exc:
            yield start, exc
            first = start + 1


def _sniff_delimiter(lines: list[str]) -> str:
    """The delimiter of a ".csv" file: `csv.Sniffer` on its first lines, among ``, ; TAB |``; a
    guess the header does not contain falls back to the most frequent of them in the header."""
    sample = "\n".join(lines[:20])
    header = lines[0] if lines else ""
    try:
        found = csv.Sniffer().sniff(sample, delimiters=_SNIFF_DELIMITERS).delimiter
    except csv.Error:
        found = ","
    if found not in header:
        counts = {d: header.count(d) for d in _SNIFF_DELIMITERS}
        found = max(counts, key=lambda d: counts[d]) if any(counts.values()) else ","
    return found


def _unused(resolver: FieldResolver, columns: Iterable[str], chosen: Iterable[Mapping[str, str]]) -> tuple[list[str], dict[str, str]]:
    """(columns no field read, their `--map` hints) given every field → column choice made."""
    chosen = list(chosen)
    taken = list(dict.fromkeys(name for found in chosen for name in found))
    used = {part for found in chosen for c in found.values() if c for part in (c, nested.split_path(c)[0])}
    unused = [c for c in dict.fromkeys(columns) if c not in used]
    hints = {c: h for c in unused if (h := resolver.hint(c, taken)) is not None}
    return unused, hints


def _read_delimited(path: Path, lines: list[str], delimiter: str | None, resolver: FieldResolver) -> ReadResult:
    """Rows of a CSV/TSV file; `delimiter` None means sniff it."""
    records: list[Record] = []
    problems: list[Problem] = []
    if delimiter is None:
        delimiter = _sniff_delimiter(lines)
        if delimiter != ",":
            problems.append(Problem(Location(path, 1), f"read as {delimiter!r}-separated (the delimiter found in the file)", "warning"))
    rows = _csv_rows(lines, 1, delimiter)
    _, header = next(rows, (1, None))
    if header is None:
        return ReadResult([], [Problem(Location(path, 1), "empty file: no header row")])
    if isinstance(header, csv.Error):
        raise InputError(f"cannot read the header row: {header}", Location(path, 1))
    header = [h.strip() for h in header]
    columns, warnings = resolver.resolve(header)
    problems.extend(Problem(Location(path, 1), w, "warning") for w in warnings)
    for start, row in rows:
        location = Location(path, start)
        if isinstance(row, csv.Error):
            problems.append(Problem(location, f"cannot read this row ({row}: an unclosed or stray quote?); skipped"))
            continue
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            problems.append(
                Problem(location, f"row has {len(row)} cells but the header has {len(header)} (unquoted delimiter in a cell?); skipped")
            )
            continue
        records.append(_record(dict(zip(header, row)), columns, location))
    unused, hints = _unused(resolver, header, [columns])
    return ReadResult(records, problems, list(resolver.used.values()), unused, hints)


@dataclass(frozen=True)
class _Unreadable:
    """A row its format's parser rejected; `reason` goes into the problem message."""

    reason: str


def _object_records(rows: Iterable[tuple[Location, Any]], resolver: FieldResolver, kind: str) -> ReadResult:
    """Records from parsed rows of a JSON Lines, JSON or YAML file: (location, object or _Unreadable).

    A row that is _Unreadable or not a mapping (`kind` names what was expected, e.g. "a JSON
    object") is an error and skipped. Columns are resolved in the row's own key order, once per
    distinct key list; each close-spelling warning is given once per file.
    """
    records: list[Record] = []
    problems: list[Problem] = []
    resolved: dict[tuple[str, ...], dict[str, str]] = {}
    warned: set[str] = set()
    keys_seen: dict[str, None] = {}
    for location, obj in rows:
        if isinstance(obj, _Unreadable):
            problems.append(Problem(location, f"{obj.reason}; skipped"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(location, f"expected {kind}, got {type(obj).__name__}; skipped"))
            continue
        keys = tuple(map(str, obj))
        keys_seen.update(dict.fromkeys(keys))
        if keys not in resolved:
            resolved[keys], warnings = resolver.resolve(keys)
            _warn_once(problems, warned, location, warnings)
        records.append(_record(obj, resolved[keys], location))
    unused, hints = _unused(resolver, keys_seen, resolved.values())
    return ReadResult(records, problems, list(resolver.used.values()), unused, hints)


def _jsonl_objects(path: Path, lines: list[str]) -> Iterator[tuple[Location, Any]]:
    """(location, parsed value or _Unreadable) for each non-blank line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield Location(path, number), json.loads(line)
        except json.JSONDecodeError as exc:
            yield Location(path, number), _Unreadable(f"invalid JSON: {exc.msg} (column {exc.colno})")


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


def _nested_rows(items: Iterable[tuple[Any, Location]], records: str | None) -> Iterator[tuple[Location, Any]]:
    """(location, record with its ancestors' fields) below each top-level item, or the items as they are."""
    if records is None:
        for item, location in items:
            yield location, item
        return
    segments = nested.record_segments(records)
    for item, location in items:
        for record, ancestors in nested.walk(item, segments, []):
            yield location, nested.with_ancestors(record, ancestors) if isinstance(record, Mapping) else record


def _read_json(path: Path, lines: list[str], resolver: FieldResolver, records: str | None) -> ReadResult:
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
    return _object_records(_nested_rows(items, records), resolver, "a JSON object")


def _looks_like_record(obj: Mapping[str, Any]) -> bool:
    """A top-level object is a record itself when some value is not a list of objects (a SWE-agent
    ``.traj`` holds `trajectory` beside `info`); only lists of objects means a container of records."""
    return any(not (isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v)) for v in obj.values())


def _yaml_objects(path: Path, loader: Any, root: Any) -> Iterator[tuple[Location, Any]]:
    """(location, constructed value or _Unreadable) for each item of the YAML sequence node `root`."""
    import yaml

    for node in root.value:
        location = Location(path, node.start_mark.line + 1)
        try:
            yield location, loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            yield location, _Unreadable(f"invalid YAML value: {getattr(exc, 'problem', None) or exc}")
        except (ValueError, KeyError, AttributeError, TypeError):
            # PyYAML's constructors for explicit tags raise plain errors on a malformed scalar
            # (`!!int x` ValueError, `!!bool maybe` KeyError, `!!timestamp x` AttributeError).
            yield location, _Unreadable("invalid YAML value: a scalar its explicit tag (such as !!int or !!timestamp) cannot hold")


def _yaml_nested(path: Path, loader: Any, root: Any, records: str) -> Iterator[tuple[Location, Any]]:
    """(location, record with its ancestors' fields) for each record the path `records` reaches."""
    import yaml

    try:
        value = _plain(loader.construct_object(root, deep=True))
    except (yaml.YAMLError, ValueError, KeyError, AttributeError, TypeError) as exc:
        raise InputError(f"invalid YAML value: {getattr(exc, 'problem', None) or exc}", Location(path, root.start_mark.line + 1)) from None
    segments = nested.record_segments(records)
    lines = list(nested.node_lines(root, segments))
    found = list(nested.walk(value, segments, []))
    if len(lines) != len(found):
        lines = [root.start_mark.line + 1] * len(found)
    for line, (record, ancestors) in zip(lines, found):
        yield Location(path, line), nested.with_ancestors(record, ancestors) if isinstance(record, Mapping) else record


def _read_yaml(path: Path, lines: list[str], resolver: FieldResolver, records: str | None) -> ReadResult:
    import yaml

    text = "\n".join(lines)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise InputError(f"invalid YAML: {exc.problem or exc}", Location(path, mark.line + 1 if mark else None)) from None
        except yaml.reader.ReaderError as exc:
            # Raised for characters YAML forbids (NUL, control codes), with a character offset.
            line = text.count("\n", 0, exc.position) + 1
            raise InputError(f"invalid YAML: character {exc.character!r} is not allowed", Location(path, line)) from None
        if root is None:
            return ReadResult([], [])
        if records is not None:
            return _object_records(_yaml_nested(path, loader, root, records), resolver, "a mapping")
        if not isinstance(root, yaml.SequenceNode):
            hint = ""
            if isinstance(root, yaml.MappingNode):
                lists = nested.record_lists(_plain(loader.construct_object(root, deep=True)))
                hint = f"; the records sit below the top: name their list with --records (lists here: {', '.join(lists[:6])})" if lists else ""
            raise InputError("expected a YAML list of records" + hint, Location(path, root.start_mark.line + 1))
        return _object_records(_yaml_objects(path, loader, root), resolver, "a mapping")
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


def read_records(path: Path, resolver: FieldResolver, fmt: str | None = None, records: str | None = None, shown: str | None = None) -> ReadResult:
    """Read every record of a CSV, TSV, JSON Lines, JSON or YAML file.

    Args:
        path: the file; its suffix picks the format unless `fmt` is given.
        resolver: how columns map to canonical fields.
        fmt: "csv", "tsv", "jsonl", "json" or "yaml", overriding the suffix. "jsonl" reads a file
            that is one JSON document (an array, a pretty-printed object) as "json".
        records: JSON/YAML only: the path of the record list below the top level (`ingest.nested`).
        shown: the file's name in locations and case references (the path relative to the
            workspace); default `path`.

    Returns:
        the readable records (in file order) and the problems (bad rows as errors, fall-backs as warnings).

    Raises:
        InputError: the file cannot be read, its format is unknown, `records` is given for a
            table, or JSON/YAML cannot be parsed at all (a whole-file fault: no row can be trusted,
            so nothing is imported).
    """
    path = Path(path)
    fmt = fmt or FORMATS.get(path.suffix.lower())
    if fmt not in set(FORMATS.values()):
        raise InputError(f"unknown format (use --format {'|'.join(sorted(set(FORMATS.values())))})", Location(path))
    if records is not None and fmt in ("csv", "tsv"):
        raise InputError(f"--records names a path inside JSON or YAML; a {fmt} file is already one record per row", Location(path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", Location(path)) from None
    if fmt == "jsonl":
        fmt = sniff_json(data)
    path = Path(shown) if shown is not None else path
    lines, decode_problems = decode_lines(path, data)
    if fmt == "jsonl" and records is None:
        result = _object_records(_jsonl_objects(path, lines), resolver, "a JSON object")
    elif fmt == "jsonl":
        items = [(obj, loc) for loc, obj in _jsonl_objects(path, lines)]
        result = _object_records(_nested_rows([(o, l) for o, l in items if not isinstance(o, _Unreadable)], records), resolver, "a JSON object")
        result.problems[:0] = [Problem(l, f"{o.reason}; skipped") for o, l in items if isinstance(o, _Unreadable)]
    elif fmt == "json":
        result = _read_json(path, lines, resolver, records)
    elif fmt == "yaml":
        result = _read_yaml(path, lines, resolver, records)
    else:
        result = _read_delimited(path, lines, "\t" if fmt == "tsv" else None, resolver)
    result.problems[:0] = decode_problems
    return result


def iter_prefixed(record: Record, prefix: str) -> Iterator[tuple[str, Any]]:
    """(suffix, value) for each canonical field named ``<prefix><suffix>`` in `record`."""
    for name, value in record.values.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            yield name[len(prefix):], value


def convert_records(
    read: ReadResult,
    build: Callable[[Record], T | AsPrior],
    problems: list[Problem],
    what: str = "row",
    account: Account | None = None,
    passing: Callable[[T], bool] = lambda case: False,
) -> list[T]:
    """Apply `build` to every record; a ValueError it raises becomes an error Problem and the record is skipped.

    `problems` receives the read problems and the build errors, and is sorted by line at the end
    (so warnings `build` appends to the same list land in order too). `account`, when given,
    receives the mapping and one fate per record: a case (`passing` tells a passing one), a prior
    (`build` returned `AsPrior`) or skipped, and a skipped fate for each row the reader could not read.

    Returns:
        the built cases in file order.
    """
    built: list[T] = []
    problems.extend(read.problems)
    fates: list[tuple[int, Callable[[], None]]] = []
    if account is not None:
        account.fields = list(read.fields)
        account.unused = [(c, read.hints.get(c)) for c in read.unused]
        for problem in read.problems:
            if problem.severity == "error":
                fates.append((problem.location.line or 0, functools.partial(account.add, problem.location, "skipped", problem.message)))
    for record in read.records:
        own = record.text("id")
        try:
            value = build(record)
        except ValueError as exc:
            problems.append(Problem(record.location, f"{exc}; {what} skipped"))
            if account is not None:
                fates.append((record.location.line or 0, functools.partial(account.add, record.location, "skipped", str(exc), None, own)))
            continue
        if isinstance(value, AsPrior):
            if account is not None:
                fates.append((record.location.line or 0, functools.partial(account.add, record.location, "prior", value.reason, None, own)))
            continue
        built.append(value)
        if account is not None:
            fate = "passing case" if passing(value) else "case"
            fates.append((record.location.line or 0, functools.partial(account.add, record.location, fate, "", value, own)))
    for _, add in sorted(fates, key=lambda f: f[0]):
        add()
    problems.sort(key=lambda p: p.location.line or 0)
    return built
