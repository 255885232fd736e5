"""The on-disk response cache (`.frames/cache`): successful answers in append-only shard files."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frames_cli.llm.store.appender import LineAppender
from frames_cli.secretscan import REDACTED


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
    """Answers keyed by `request_key`, one JSON line each in `<dir>/<key[:2]>.jsonl` (256 shards).

    Only successful answers are stored (callers never `put` errors). Entries are appended as whole
    lines in batches (LineAppender; the client flushes after every batch of requests); Linux
    appends each such write whole, so concurrent writers (threads or processes) interleave lines,
    never halves of them. A line cut short by a crash is skipped when read; a key written twice
    keeps its last line. A shard is read once, on its first lookup. Why not a file per entry:
    creating a file cost ~1 ms of CPU per call here, a third of a simulated call.

    A cached answer must be the answer: replayed, it must give the result the call gave. An entry
    `redact` would change (the answer holds an API key of the environment or a credential-shaped
    string, such as a case's expected token) is therefore not stored at all, rather than stored
    redacted (which turned a pass into a fail on the next, unchanged run) or stored as it is
    (credentials never reach the cache, DESIGN §10); such a call is made again next time. Entries
    an older frames stored redacted are not replayed either.
    """

    def __init__(self, directory: Path, redact: Callable[[str], str]):
        self.dir = Path(directory)
        self._redact = redact
        self._lock = threading.Lock()
        self._shards: dict[str, dict[str, dict[str, Any]]] = {}
        self._out = LineAppender()

    def _shard(self, prefix: str) -> dict[str, dict[str, Any]]:
        shard = self._shards.get(prefix)
        if shard is None:
            shard = self._shards[prefix] = {}
            try:
                with open(self.dir / f"{prefix}.jsonl", encoding="utf-8") as fh:
                    for line in fh:
                        try:
                            entry = json.loads(line)
                        except ValueError:
                            continue
                        if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                            shard[entry["key"]] = entry
            except OSError:
                pass
        return shard

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for `key` (with a `key` field added), or None (also for an entry an
        older frames stored redacted: it is not the answer the model gave)."""
        with self._lock:
            entry = self._shard(key[:2]).get(key)
        return None if entry is None or REDACTED in json.dumps(entry, ensure_ascii=False) else entry

    def put(self, key: str, entry: dict[str, Any]) -> bool:
        """Store `entry` (JSON-serialisable) under `key`; a later put of the same key wins.

        The entry is visible to `get` at once and reaches the disk with the next batch (`flush`).

        Returns:
            False, storing nothing, when the entry holds a credential (see the class docstring).
        """
        line = json.dumps({"key": key, **entry}, ensure_ascii=False, sort_keys=True)
        if self._redact(line) != line:
            return False
        with self._lock:
            self._shard(key[:2])[key] = json.loads(line)
        self._out.add(self.dir / f"{key[:2]}.jsonl", line)
        return True

    def flush(self) -> None:
        """Write every queued entry to its shard file now."""
        self._out.flush()
