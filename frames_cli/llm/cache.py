"""The on-disk response cache (`.frames/cache`): one JSON file per successful request."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable

from frames_cli.workspace.atomic import atomic_write_bytes


def request_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any], sample: int) -> str:
    """Hex sha256 of the canonical JSON of everything that determines an answer.

    Args:
        model: the litellm model string.
        messages: the chat messages.
        params: call parameters that change the answer (temperature, max_tokens, schema).
        sample: the sample index, so k samples of one request are k entries.
    """
    blob = json.dumps([model, messages, params, sample], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers keyed by `request_key`, stored as `<dir>/<key[:2]>/<key>.json`.

    Only successful answers are stored (callers never `put` errors). Writes are atomic (temporary
    file + rename), so concurrent writers of one key leave one whole file and readers never see half
    of one; an unreadable entry counts as a miss. Writes skip fsync (see `atomic_write_bytes`):
    entries survive a killed run, and the ~8 ms per fsync would double a batch's wall time.
    Entry text passes through `redact` before writing.
    """

    def __init__(self, directory: Path, redact: Callable[[str], str]):
        self.dir = Path(directory)
        self._redact = redact

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for `key`, or None (missing or unreadable)."""
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store `entry` (JSON-serialisable) under `key`, replacing any older one."""
        data = self._redact(json.dumps(entry, ensure_ascii=False, sort_keys=True)).encode("utf-8")
        atomic_write_bytes(self._path(key), data, durable=False)
