"""`frames ingest cases`: generic import of cases from JSON Lines, CSV, TSV or YAML with a field mapping.

For tables that already hold cases under other names: ``--map input=question,expected=answer``.
Fields: ``input`` (required), ``expected`` (required), ``category``, ``check`` (a check kind),
``answer_format``, ``evidence`` (a list, or text with one rule per line or separated by `` | ``),
``notes``, ``symptom``, ``id`` (kept in the source reference), and ``fields.NAME`` for structured
input fields. A CSV cell for ``expected`` that holds a JSON list or object (``["a", "b"]``) is
read as that value, so `set` checks can be imported from spreadsheets; other cells stay text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.formats.case import Case, Check, Diagnosis
from frames_cli.formats.problems import Problem
from frames_cli.ingest.dedup import make_case
from frames_cli.ingest.records import FieldResolver, Record, convert_records, iter_prefixed, read_records
from frames_cli.registry import CHECKS

KIND = "import"

ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "case_id"),
    "input": ("input", "question", "prompt", "query", "text", "request"),
    "expected": ("expected", "answer", "expected_output", "target", "ground_truth", "gold"),
    "category": ("category", "topic", "type"),
    "check": ("check", "check_kind", "scoring"),
    "answer_format": ("answer_format", "format"),
    "evidence": ("evidence", "rule", "rules", "policy_rule"),
    "notes": ("notes", "note", "comment"),
    "symptom": ("symptom",),
}
#: Fields `--map` accepts.
FIELDS = (*ALIASES, "fields.")


def _json_cell(value: Any) -> Any:
    """A text cell that is a JSON list or object becomes that value; anything else is returned as is."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _evidence(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    parts = str(value).replace(" | ", "\n").splitlines()
    return [p.strip() for p in parts if p.strip()]


@dataclass
class GenericConverter:
    """Rows of a table or list → cases (a `Converter`).

    Args:
        path: the file (format by suffix unless `fmt`).
        mapping: canonical field → column (`--map`), over `ALIASES`.
        fmt: "csv", "tsv", "jsonl" or "yaml".
        category: category of rows that name none (`ingest.category`).
        check: check kind of rows that name none (None: `set` for list answers, else `exact`).

    After `convert`, `problems` holds the bad rows (skipped) and warnings, with file and line.
    """

    path: Path
    mapping: dict[str, str] = field(default_factory=dict)
    fmt: str | None = None
    category: str = "uncategorized"
    check: str | None = None
    kind: str = KIND
    problems: list[Problem] = field(default_factory=list, init=False)

    def convert(self) -> list[Case]:
        """Read every row; one case per good row, in file order.

        Raises:
            InputError: the file cannot be read at all, or `check` is not a known check kind.
        """
        if self.check is not None:
            CHECKS.validate(self.check)
        read = read_records(Path(self.path), FieldResolver(self.mapping, ALIASES), self.fmt)
        self.problems = []
        return convert_records(read, self._case, self.problems, "row")

    def _case(self, record: Record) -> Case:
        missing = [name for name in ("input", "expected") if name not in record.values]
        if missing:
            raise ValueError(f"missing {' and '.join(missing)} (map columns with --map {missing[0]}=COLUMN)")
        text = record.values["input"]
        if not isinstance(text, str):
            raise ValueError("`input` must be text")
        kind = record.text("check") or self.check
        if kind is not None and kind not in CHECKS.builtins:
            raise ValueError(f"unknown check kind {kind!r} (valid: {', '.join(CHECKS.names())})")
        ref = record.ref()
        diagnosis = Diagnosis(
            symptom=record.text("symptom") or "",
            notes=record.text("notes") or "",
            evidence=_evidence(record.values["evidence"]) if "evidence" in record.values else [],
        )
        return make_case(
            KIND,
            ref,
            text=text,
            fields=dict(iter_prefixed(record, "fields.")),
            expected=_json_cell(record.values["expected"]),
            category=record.text("category") or self.category,
            check=Check(kind) if kind else None,
            answer_format=record.text("answer_format") or "",
            diagnosis=diagnosis,
        )
