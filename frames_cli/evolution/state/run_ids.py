"""The names of a run and its candidates: run ids, candidate ids,
their refs and the review branch (all safe in paths and ref names)."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

from frames_cli.errors import InputError

BASE_ID = "r0c0"
RUN_ID_RE = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")
CANDIDATE_ID_RE = re.compile(r"^r(\d+)c(\d+)$")


def new_run_id(now: datetime | None = None) -> str:
    """A fresh run id `YYYYMMDD-HHMMSS-<6 hex>` (UTC time, random suffix); ids sort by start time."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def check_run_id(run_id: str) -> str:
    """Return `run_id` if it has the run id format (so it is safe in paths and ref names).

    Raises:
        InputError: anything else, for example a path like "../x".
    """
    if not RUN_ID_RE.match(run_id):
        raise InputError(f"not a run id (expected YYYYMMDD-HHMMSS-xxxxxx): {run_id!r}")
    return run_id


def candidate_id(round_no: int, index: int) -> str:
    """The id of the `index`-th child made in round `round_no` ("r2c1"); S0 is BASE_ID ("r0c0")."""
    return f"r{round_no}c{index}"


def candidate_ref(run_id: str, cand_id: str) -> str:
    """The ref that keeps a candidate's commit: `refs/frames/runs/<run-id>/<candidate-id>`."""
    if not CANDIDATE_ID_RE.match(cand_id):
        raise InputError(f"not a candidate id (expected r<round>c<n>): {cand_id!r}")
    return f"refs/frames/runs/{check_run_id(run_id)}/{cand_id}"


def review_branch(run_id: str) -> str:
    """The review branch name of a run: `frames/<run-id>`."""
    return f"frames/{check_run_id(run_id)}"
