"""Label conflicts: cases a diagnoser says are mislabelled (their
expected result contradicts the policy), until a person decides.

A disputed case leaves the gate, the front and the diagnosis set (its failure is never turned into
a rule) until a person sets `label: confirmed` (the expected result stands: the case counts again)
or `label: disputed` (it is wrong: it stays out) in its case file. Disputes are kept per workspace in
`.frames/disputed-cases.json`, so a later run leaves an undecided case out too, and `frames status`
and `frames review` list them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from frames_cli.files.atomic import atomic_write_json

if TYPE_CHECKING:
    from frames_cli.formats.case import Case
    from frames_cli.workspace.layout import Workspace

DISPUTES_FILE = "disputed-cases.json"


def load_disputes(ws: Workspace) -> dict[str, dict]:
    """case id → its dispute `{"run", "round", "diagnoser", "passage", "reason"}`, from every run so far.

    A damaged or missing file reads as none: it is what runs recorded, not user input (the
    decisions themselves live in the case files).
    """
    try:
        data = json.loads((ws.state_dir / DISPUTES_FILE).read_text(encoding="utf-8"))
        return {str(k): dict(v) for k, v in data.get("disputes", {}).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def save_disputes(ws: Workspace, disputes: Mapping[str, dict]) -> None:
    """Add `disputes` to the workspace file (an earlier record of the same case is kept); atomic."""
    merged = {**disputes, **load_disputes(ws)}
    ws.make_state_dir()
    atomic_write_json(ws.state_dir / DISPUTES_FILE, {"version": 1, "disputes": dict(sorted(merged.items()))})


def excluded_ids(cases: Mapping[str, Case], disputes: Mapping[str, dict]) -> set[str]:
    """The cases that count nowhere now: disputed and not `label: confirmed`, or `label: disputed`."""
    out = {cid for cid in disputes if cid in cases and cases[cid].label != "confirmed"}
    return out | {cid for cid, case in cases.items() if case.label == "disputed"}


def open_disputes(cases: Mapping[str, Case], disputes: Mapping[str, dict]) -> dict[str, dict]:
    """The disputes nobody has decided yet (the case exists and has no `label`), by case id."""
    return {cid: rec for cid, rec in sorted(disputes.items()) if cid in cases and cases[cid].label is None}
