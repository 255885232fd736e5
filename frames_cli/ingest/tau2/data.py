"""tau2-bench's files: a domain database (`db.json`, or one file per table) and `tasks.json` with each task's line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError, Location


class Tau2Db:
    """A tau2 domain database: table name → {record id → record}.

    Read either from a folder holding tau2's `db.json` or one `<table>.json` per table (the
    tau-bench layout), or from a `.json` file holding all tables.
    """

    def __init__(self, tables: dict[str, dict[str, Any]], path: Path):
        self.tables = tables
        self.path = path

    @classmethod
    def load(cls, path: Path | str) -> Tau2Db:
        """Load a database.

        Raises:
            InputError: missing path, unreadable or invalid JSON, or a table that is not a mapping.
        """
        path = Path(path)
        if path.is_dir() and (path / "db.json").is_file():
            path = path / "db.json"
        if path.is_file():
            tables = _read_json(path)
            if not isinstance(tables, dict):
                raise InputError("a tau2 database must be a JSON object of tables", Location(path, 1))
        elif path.is_dir():
            tables = {
                p.stem: _read_json(p) for p in sorted(path.glob("*.json")) if p.stem not in ("tasks", "split_tasks")
            }
        else:
            raise InputError("no such database file or folder", Location(path))
        for name, table in tables.items():
            if not isinstance(table, dict):
                raise InputError(f"table {name!r} must be a JSON object keyed by id", Location(path))
        return cls(tables, path)

    def check_domain(self, domain: str, records: str) -> None:
        """Refuse a database that is not the domain's: the converter reads its users (objects whose
        `name` is an object of first and last name) and its table of customer records (`records`,
        objects). τ²'s mock domain (users named by a string, tasks not reservations) traced back.

        Raises:
            InputError: at the database file, naming what does not fit.
        """
        table = self.table(records)
        if not table:
            raise InputError(
                f"the database holds no `{records}` table: it is not tau2's {domain} database (pass that domain's "
                "db.json, or --domain)",
                Location(self.path),
            )
        bad_record = next((rid for rid, r in table.items() if not isinstance(r, dict)), None)
        bad_user = next(
            (
                uid for uid, u in self.table("users").items()
                if not isinstance(u, dict) or not isinstance(u.get("name") or {}, dict)
            ),
            None,
        )
        if bad_record is not None or bad_user is not None:
            what = (
                f"record {bad_record!r} of `{records}` is not an object"
                if bad_record is not None
                else f"user {bad_user!r} is not an object with a first and last name"
            )
            raise InputError(f"{what}: the database is not shaped like tau2's {domain} database", Location(self.path))

    def table(self, name: str) -> dict[str, Any]:
        """The table `name`, or {} if the database has none."""
        return self.tables.get(name, {})

    def row(self, name: str, key: str | None) -> dict[str, Any] | None:
        """The row `key` of table `name`, or None (also when there is no key: a task's action may name none)."""
        return self.table(name).get(key) if key is not None else None

    def user(self, user_id: str) -> dict[str, Any] | None:
        """The user record with its id as the first key, or None."""
        record = self.table("users").get(user_id)
        return {"user_id": user_id, **{k: v for k, v in record.items() if k != "user_id"}} if record else None


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", Location(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", Location(path, exc.lineno)) from None


def read_tasks(path: Path | str, shown: str | None = None) -> list[tuple[dict[str, Any], Location]]:
    """Read a tau2 `tasks.json` (a JSON array of tasks) with the line where each task starts;
    `shown` names the file in locations (default `path`).

    Raises:
        InputError: unreadable file, invalid JSON or not an array of objects (`path:line`).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", Location(path)) from None
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")

    label = Path(shown) if shown is not None else path

    def fail(message: str, pos: int) -> InputError:
        return InputError(message, Location(label, text.count("\n", 0, pos) + 1))

    def skip_space(at: int) -> int:
        found = ws.match(text, at)  # `\s*` matches everywhere, if only the empty string
        return found.end() if found else at

    pos = skip_space(0)
    if not text.startswith("[", pos):
        raise fail("tasks file must be a JSON array of tasks", pos)
    pos = skip_space(pos + 1)
    tasks: list[tuple[dict[str, Any], Location]] = []
    while not text.startswith("]", pos):
        try:
            task, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise fail(f"invalid JSON: {exc.msg}", exc.pos) from None
        if not isinstance(task, dict):
            raise fail("each task must be a JSON object", pos)
        tasks.append((task, Location(label, text.count("\n", 0, pos) + 1)))
        pos = skip_space(end)
        if text.startswith(",", pos):
            pos = skip_space(pos + 1)
        elif not text.startswith("]", pos):
            raise fail("expected `,` or `]` after a task", pos)
    return tasks
