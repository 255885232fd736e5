"""`frames ingest cases`: generic import of cases from JSON Lines, CSV, TSV or YAML with a field mapping.

For tables that already hold cases under other names: ``--map input=question,expected=answer``.
Fields: ``input`` (required), ``expected`` (required), ``category``, ``check`` (a check kind),
``answer_format``, ``evidence`` (a list, or text with one rule per line or separated by `` | ``),
``notes``, ``symptom``, ``id`` (the case's id, and kept in the source reference), and
``fields.NAME`` for structured input fields. A CSV cell for ``expected`` that holds a JSON list or
object (``["a", "b"]``) is read as that value, so `set` checks can be imported from spreadsheets;
other cells stay text.

Records below the top level of a JSON or YAML file are named with a record path
(``--records seed_examples.questions_and_answers`` for an InstructLab ``qna.yaml``); each record
also sees its parents' fields, so a seed example's ``context`` is the evidence of each of its
questions (``context`` is an alias of ``evidence``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.formats.case import Case, Check, Diagnosis
from frames_cli.formats.problems import Problem
from frames_cli.ingest.rows.account import Account
from frames_cli.ingest.cases.dedup import make_case
from frames_cli.ingest.rows.records import FieldResolver, Record, convert_records, iter_prefixed, read_records
from frames_cli.registry import CHECKS

KIND = "import"

ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "case_id"),
    "input": ("input", "question", "prompt", "query", "text", "request"),
    "expected": ("expected", "answer", "expected_output", "target", "ground_truth", "gold"),
    "category": ("category", "topic", "type"),
    "check": ("check", "check_kind", "scoring"),
    "answer_format": ("answer_format", "format"),
    "evidence": ("evidence", "rule", "rules", "policy_rule", "context"),
    "notes": ("notes", "note", "comment"),
    "symptom": ("symptom",),
}
#: Fields `--map` accepts.
FIELDS = (*ALIASES, "fields.")
# A case id given in the file becomes the case's id: it must be safe in file names and references.
_CASE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


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
        records: JSON/YAML: the path of the record list below the top level (`ingest.rows.nested`).
        shown: the file's name in locations and case references (relative to the workspace).

    After `convert`, `problems` holds the bad rows (skipped) and warnings, with file and line,
    and `account` the mapping and every row's fate.
    """

    path: Path
    mapping: dict[str, str] = field(default_factory=dict)
    fmt: str | None = None
    category: str = "uncategorized"
    check: str | None = None
    records: str | None = None
    shown: str | None = None
    kind: str = KIND
    problems: list[Problem] = field(default_factory=list, init=False)
    account: Account = field(default_factory=Account, init=False)

    def convert(self) -> list[Case]:
        """Read every row; one case per good row, in file order.

        Raises:
            InputError: the file cannot be read at all, `check` is not a known check kind, or the
                records sit below the top level and `records` does not say where.
        """
        if self.check is not None:
            CHECKS.validate(self.check)
        read = read_records(Path(self.path), FieldResolver(self.mapping, ALIASES), self.fmt, self.records, self.shown)
        self.problems, self.account = [], Account()
        return convert_records(read, self._case, self.problems, "row", self.account)

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
        own = record.text("id")
        if own is not None and not _CASE_ID.fullmatch(own):
            raise ValueError(f"id {own!r} cannot be a case id (letters, digits and . _ : - only, at most 128)")
        diagnosis = Diagnosis(
            symptom=record.text("symptom") or "",
            notes=record.text("notes") or "",
            evidence=_evidence(record.values["evidence"]) if "evidence" in record.values else [],
        )
        case = make_case(
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
        if own is not None:
            case.id = own
        return case
