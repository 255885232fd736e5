"""The account every `frames ingest` ends with: how columns were read and what became of every row.

A converter that reads rows fills an `Account` while it converts: the field → column mapping it
used (and how each was found), the columns it did not use (with a `--map` hint when one looks
like a known field under another name), and one `RowFate` per row, task or trace. After the
cases are stored, `settle` turns the rows whose case was folded into an existing one into
duplicates. Nothing a file holds is dropped without a line here: `rows` covers every record the
reader found, readable or not.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frames_cli.errors import Location

if TYPE_CHECKING:
    from frames_cli.formats.case import Case
    from frames_cli.ingest.keys.answer_key import AnswerKey

#: The fates of a row, in the order the summary lists them.
FATES = ("case", "passing case", "prior", "duplicate", "skipped")


@dataclass(frozen=True)
class AsPrior:
    """What a converter's row builder returns for a row that became advice (a prior), and why."""

    reason: str


@dataclass(frozen=True)
class FieldUse:
    """One mapped field: `field` read from `column`; `how` is "--map", "name" (an alias) or
    "close spelling" (a misspelt alias, also warned about)."""

    field: str
    column: str
    how: str


@dataclass
class RowFate:
    """What became of one row.

    Attributes:
        location: the file and 1-based line where the row starts.
        fate: one of `FATES`.
        reason: why (the error for a skipped row, the advice rule for a prior, the case it
            duplicates ...).
        case_id: the case the row became or was folded into (None for priors and skipped rows).
        own_id: the row's own id from the file (a reviewer's "TR-101"), when it has one.
        case: the built case (not serialised; `settle` matches it against the store's merges).
        comment: the reviewer's comment, when the row had one (`annotate`).
        key: the answer key read from the comment (`annotate`).
    """

    location: Location
    fate: str
    reason: str = ""
    case_id: str | None = None
    own_id: str | None = None
    case: Case | None = field(default=None, repr=False, compare=False)
    comment: str | None = None
    key: AnswerKey | None = field(default=None, repr=False, compare=False)

    @property
    def review(self) -> str:
        """Why the row's case waits for a person (`review: needed`), "" when it does not."""
        if self.case is None or self.case.review != "needed":
            return ""
        if self.key is not None and self.key.requirements:
            return self.key.unsure or "the key reader was unsure"
        return "the comment states no requirement; graded by the whole comment until a person writes the requirement"

    def to_json(self) -> dict[str, Any]:
        """``{"location", "fate", "reason", "case", "id"}`` (plain JSON), and for a row with a
        comment ``"comment"``, ``"key"`` (the requirements), ``"key_by"``, ``"no_key"`` (why there
        is none, "" when there is one) and ``"review"`` (why a person must confirm, "" if not)."""
        out: dict[str, Any] = {
            "location": str(self.location), "fate": self.fate, "reason": self.reason, "case": self.case_id,
            "id": self.own_id,
        }
        if self.key is not None:
            out.update(
                comment=self.comment, key=self.key.requirements, key_by=self.key.by, no_key=self.key.none,
                review=self.review,
            )
        return out


@dataclass
class Account:
    """The mapping and every row's fate for one ingest.

    Attributes:
        fields: the fields read and the columns they came from, in the converter's field order.
        unused: (column, hint) for each column no field read; hint is a `--map FIELD=COLUMN`
            suggestion or None.
        rows: one fate per row, in file order.
    """

    fields: list[FieldUse] = field(default_factory=list)
    unused: list[tuple[str, str | None]] = field(default_factory=list)
    rows: list[RowFate] = field(default_factory=list)

    def add(
        self, location: Location, fate: str, reason: str = "", case: Case | None = None, own_id: str | None = None
    ) -> None:
        """Record the fate of the row at `location` (`fate` one of `FATES`)."""
        if fate not in FATES:
            raise ValueError(f"unknown fate {fate!r}")
        self.rows.append(RowFate(location, fate, reason, case.id if case is not None else None, own_id, case))

    def annotate(self, location: Location, comment: str | None, key: AnswerKey) -> None:
        """Attach the comment and the answer key read from it to the row at `location`."""
        for row in self.rows:
            if row.location == location:
                row.comment, row.key = comment, key

    def settle(self, merged: list[tuple[str, str]]) -> None:
        """Mark rows whose case the store folded into another case as duplicates, and take the ids
        the store gave the others (a ``-2`` suffix on a clash).

        Args:
            merged: (source ref of the folded case, id of the case it went into), from `StoreResult`.
        """
        into = dict(merged)
        for row in self.rows:
            if row.case is None or row.fate not in ("case", "passing case"):
                continue
            target = into.get(row.case.source.ref)
            if target is not None:
                row.reason = (
                    f"same input and expected answer as case {target} ({row.fate}); its source is kept in that case's "
                    "also_from"
                )
                row.fate, row.case_id = "duplicate", target
            else:
                row.case_id = row.case.id

    def counts(self) -> dict[str, int]:
        """Fate → number of rows, every fate listed (0 when none)."""
        seen = Counter(r.fate for r in self.rows)
        return {fate: seen.get(fate, 0) for fate in FATES}

    def to_json(self) -> dict[str, Any]:
        """``{"fields": [{"field", "column", "how"}], "unused_columns": [{"column", "hint"}],
        "counts": {fate: n}, "rows": [RowFate.to_json()]}``."""
        return {
            "fields": [{"field": f.field, "column": f.column, "how": f.how} for f in self.fields],
            "unused_columns": [{"column": c, "hint": h} for c, h in self.unused],
            "counts": self.counts(),
            "rows": [r.to_json() for r in self.rows],
        }

    def lines(self) -> list[str]:
        """The account as plain lines for people: mapping, unused columns with hints, counts, then
        one line per row that did not simply become a case (``path:line: fate: reason``)."""
        out = []
        if self.fields:
            out.append(
                "fields: "
                + ", ".join(f"{f.field} ← {f.column}" + ("" if f.how == "name" else f" ({f.how})") for f in self.fields)
            )
        for column, hint in self.unused:
            out.append(f"column {column!r} not used" + (f"; it looks like a known field: {hint}" if hint else ""))
        counts = self.counts()
        out.append(f"{len(self.rows)} row(s): " + ", ".join(f"{n} {fate}" for fate, n in counts.items()))
        for row in self.rows:
            own = f" [{row.own_id}]" if row.own_id else ""
            what = f" {row.case_id}" if row.case_id and row.fate != "duplicate" else ""
            out.append(f"{row.location}{own}: {row.fate}{what}" + (f": {row.reason}" if row.reason else "")
                       + (f" — review: needed ({row.review})" if row.review else ""))
        return out
