"""Records and the field mapping: which column holds each canonical field, and the record a row becomes.

Field names are matched to canonical names through `--map FIELD=COLUMN`, then the converter's
aliases, then (with a warning) a close spelling of an alias (``coment`` → ``comment``), since
column headers are typed by hand. The choices are kept for the ingest's account, and an unused
column that looks like a known field gets a `--map` hint (`FieldResolver.hint`).
"""

from __future__ import annotations

import datetime as _dt
import difflib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frames_cli.errors import InputError, Location
from frames_cli.formats.problems import Problem
from frames_cli.ingest.rows import nested
from frames_cli.ingest.rows.account import FieldUse

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
                picked = _pick(names, free, exact)
                if picked is not None:
                    found[name] = picked
                    self.used.setdefault(name, FieldUse(name, picked, "name" if exact else "close spelling"))
                    if not exact:
                        warnings.append(
                            f"column {picked!r} read as `{name}` (closest known name; use --map to be explicit)"
                        )
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


def plain(value: Any) -> Any:
    """`value` with YAML's dates and times as ISO text, so every record is plain JSON data."""
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _clean(value: Any) -> Any:
    """Strip strings; empty strings and empty containers become None (absent)."""
    value = plain(value)
    if isinstance(value, str):
        value = value.strip()
        return value or None
    if isinstance(value, (list, dict)) and not value:
        return None
    return value



#: Fields whose empty list is an answer, not an absent value: τ-bench's ``info.task.actions: []``
#: says the right outcome writes nothing (a refusal), which is what a policy agent must learn.
EMPTY_LIST_FIELDS = ("expected", "correct")


def make_record(obj: Mapping[str, Any], columns: dict[str, str], location: Location) -> Record:
    """The record of one row or object: each field's value at its column (cleaned, absent ones
    left out; an empty list kept for `EMPTY_LIST_FIELDS`), and the other non-empty columns as extra."""
    raw = {name: nested.lookup(obj, column) for name, column in columns.items()}
    values = {name: [] if name in EMPTY_LIST_FIELDS and value == [] else _clean(value) for name, value in raw.items()}
    used = {nested.split_path(c)[0] if c not in obj else c for c in columns.values() if c}
    extra = {str(k): v for k, v in obj.items() if k not in used and _clean(v) is not None}
    return Record({k: v for k, v in values.items() if v is not None}, location, extra)


def unused_columns(
    resolver: FieldResolver, columns: Iterable[str], chosen: Iterable[Mapping[str, str]]
) -> tuple[list[str], dict[str, str]]:
    """(columns no field read, their `--map` hints) given every field → column choice made."""
    chosen = list(chosen)
    taken = list(dict.fromkeys(name for found in chosen for name in found))
    used = {part for found in chosen for c in found.values() if c for part in (c, nested.split_path(c)[0])}
    unused = [c for c in dict.fromkeys(columns) if c not in used]
    hints = {c: h for c in unused if (h := resolver.hint(c, taken)) is not None}
    return unused, hints


def iter_prefixed(record: Record, prefix: str) -> Iterator[tuple[str, Any]]:
    """(suffix, value) for each canonical field named ``<prefix><suffix>`` in `record`."""
    for name, value in record.values.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            yield name[len(prefix):], value
