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
- Records may sit below the top level (`records`, see `ingest.rows.nested`): each is read with its
  ancestors' fields, so a mapping can name a parent's key.
- What was read is kept for the ingest's account: the field → column choices (`ReadResult.fields`)
  and the columns no field used (`ReadResult.unused`, with `FieldResolver.hint`).
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.errors import InputError, Location
from frames_cli.formats.problems import Problem
from frames_cli.ingest.rows.account import Account, AsPrior
from frames_cli.ingest.rows.fields import (
    FieldResolver,
    ReadResult,
    Record,
    iter_prefixed,
    make_record,
    parse_mapping,
    unused_columns,
)
from frames_cli.ingest.rows.objects import (
    Unreadable,
    json_array_items,
    jsonl_objects,
    nested_rows,
    object_records,
    read_json,
    read_yaml,
    sniff_json,
)

if TYPE_CHECKING:
    from frames_cli.formats.case import Case

__all__ = [
    "FORMATS", "FieldResolver", "ReadResult", "Record", "convert_records", "decode_lines", "iter_prefixed",
    "json_array_items", "parse_mapping", "read_records",
]

#: Suffix → reader format; `--format` overrides it.
FORMATS = {
    ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".yaml": "yaml",
    ".yml": "yaml",
}
_SNIFF_DELIMITERS = ",;\t|"

#: Parsed JSON Lines rows → (records' rows, warnings about the lines merged).
Regroup = Callable[[list[tuple[Location, Any]]], tuple[list[tuple[Location, Any]], list[Problem]]]


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


def _read_delimited(path: Path, lines: list[str], delimiter: str | None, resolver: FieldResolver) -> ReadResult:
    """Rows of a CSV/TSV file; `delimiter` None means sniff it."""
    records: list[Record] = []
    problems: list[Problem] = []
    if delimiter is None:
        delimiter = _sniff_delimiter(lines)
        if delimiter != ",":
            problems.append(
                Problem(
                    Location(path, 1), f"read as {delimiter!r}-separated (the delimiter found in the file)", "warning"
                )
            )
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
                Problem(
                    location,
                    f"row has {len(row)} cells but the header has {len(header)} (unquoted delimiter in a cell?); "
                    "skipped",
                )
            )
            continue
        records.append(make_record(dict(zip(header, row)), columns, location))
    unused, hints = unused_columns(resolver, header, [columns])
    return ReadResult(records, problems, list(resolver.used.values()), unused, hints)


def read_records(
    path: Path, resolver: FieldResolver, fmt: str | None = None, records: str | None = None, shown: str | None = None,
    regroup: Regroup | None = None,
) -> ReadResult:
    """Read every record of a CSV, TSV, JSON Lines, JSON or YAML file.

    Args:
        path: the file; its suffix picks the format unless `fmt` is given.
        resolver: how columns map to canonical fields.
        fmt: "csv", "tsv", "jsonl", "json" or "yaml", overriding the suffix. "jsonl" reads a file
            that is one JSON document (an array, a pretty-printed object) as "json".
        records: JSON/YAML only: the path of the record list below the top level (`ingest.rows.nested`).
        shown: the file's name in locations and case references (the path relative to the
            workspace); default `path`.
        regroup: JSON Lines only: turns the parsed lines into the records (several lines into one,
            e.g. `sessions.group_sessions`) and gives warnings that account for the lines it merged.

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
        raise InputError(
            f"--records names a path inside JSON or YAML; a {fmt} file is already one record per row", Location(path)
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", Location(path)) from None
    if fmt == "jsonl":
        fmt = sniff_json(data)
    path = Path(shown) if shown is not None else path
    lines, decode_problems = decode_lines(path, data)
    if fmt == "jsonl" and records is None:
        rows, regrouped = regroup(list(jsonl_objects(path, lines))) if regroup else (jsonl_objects(path, lines), [])
        result = object_records(rows, resolver, "a JSON object")
        result.problems.extend(regrouped)
    elif fmt == "jsonl":
        items = [(obj, loc) for loc, obj in jsonl_objects(path, lines)]
        result = object_records(
            nested_rows([(o, at) for o, at in items if not isinstance(o, Unreadable)], records), resolver,
            "a JSON object",
        )
        result.problems[:0] = [Problem(at, f"{o.reason}; skipped") for o, at in items if isinstance(o, Unreadable)]
    elif fmt == "json":
        result = read_json(path, lines, resolver, records)
    elif fmt == "yaml":
        result = read_yaml(path, lines, resolver, records)
    else:
        result = _read_delimited(path, lines, "\t" if fmt == "tsv" else None, resolver)
    result.problems[:0] = decode_problems
    return result


def convert_records(
    read: ReadResult,
    build: Callable[[Record], Case | AsPrior],
    problems: list[Problem],
    what: str = "row",
    account: Account | None = None,
    passing: Callable[[Case], bool] = lambda case: False,
) -> list[Case]:
    """Apply `build` to every record; a ValueError it raises becomes an error Problem and the record is skipped.

    `problems` receives the read problems and the build errors, and is sorted by line at the end
    (so warnings `build` appends to the same list land in order too). `account`, when given,
    receives the mapping and one fate per record: a case (`passing` tells a passing one), a prior
    (`build` returned `AsPrior`) or skipped, and a skipped fate for each row the reader could not read.

    Returns:
        the built cases in file order.
    """
    built: list[Case] = []
    problems.extend(read.problems)
    fates = _reader_fates(read, account) if account is not None else []
    for record in read.records:
        own = record.text("id")
        try:
            value = build(record)
        except ValueError as exc:
            problems.append(Problem(record.location, f"{exc}; {what} skipped"))
            if account is not None:
                fates.append(
                    (
                        record.location.line or 0,
                        functools.partial(account.add, record.location, "skipped", str(exc), None, own),
                    )
                )
            continue
        if isinstance(value, AsPrior):
            if account is not None:
                fates.append(
                    (
                        record.location.line or 0,
                        functools.partial(account.add, record.location, "prior", value.reason, None, own),
                    )
                )
            continue
        built.append(value)
        if account is not None:
            fate = "passing case" if passing(value) else "case"
            fates.append(
                (record.location.line or 0, functools.partial(account.add, record.location, fate, "", value, own))
            )
    for _, add in sorted(fates, key=lambda f: f[0]):
        add()
    problems.sort(key=lambda p: p.location.line or 0)
    return built


def _reader_fates(read: ReadResult, account: Account) -> list[tuple[int, Callable[[], None]]]:
    """Give `account` the reader's fields and unused columns; (line, its record) of each row the reader
    could not read, a skipped fate."""
    account.fields = list(read.fields)
    account.unused = [(c, read.hints.get(c)) for c in read.unused]
    return [
        (problem.location.line or 0, functools.partial(account.add, problem.location, "skipped", problem.message))
        for problem in read.problems
        if problem.severity == "error"
    ]
