"""The per-run audit log `exchanges.jsonl` and the secret redaction it (and the cache) relies on."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from frames_cli.llm.store.appender import LineAppender
from frames_cli.secretscan import REDACTED

# Environment variables whose values are secrets by name (OPENAI_API_KEY, AZURE_API_KEY, HF_TOKEN...).
_SECRET_ENV_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$|_KEY_", re.IGNORECASE)
# Shorter values (e.g. "1", "true") would redact ordinary words.
_MIN_SECRET_LEN = 8


class Redactor:
    """Replaces API keys and other secrets in text with ``[REDACTED]``.

    Secrets are (1) values of environment variables named like keys/tokens/secrets, read once when
    the Redactor is made, and (2) anything shaped like a known credential (`frames_cli.secretscan`:
    detect-secrets' rule set plus `AIza…`, `sk-proj-…`, AWS secret keys, `Bearer …`, `api_key=…`).
    Apply it to plain text or to serialised JSON: literal secrets are looked for both as they are
    and as JSON escapes them; no rule matches across a JSON string's quotes.
    """

    def __init__(self, environ: Mapping[str, str] | None = None):
        env = os.environ if environ is None else environ
        values = {v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v) >= _MIN_SECRET_LEN}
        # The log and cache hold serialised JSON, where a value with `"`, `\` or a control
        # character appears escaped; look for that spelling too.
        values |= {json.dumps(v, ensure_ascii=False)[1:-1] for v in values}
        # Longest first, so a secret that contains another is removed whole.
        self._literals = sorted(values, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        from frames_cli.secretscan import redact_secrets

        for value in self._literals:
            if value in text:
                text = text.replace(value, REDACTED)
        return redact_secrets(text, REDACTED)


class AuditLog:
    """Append-only JSON Lines log of every model exchange of a run (`<run_dir>/exchanges.jsonl`).

    One line per model call (a retry or the repair turn is its own line); secrets are redacted
    before writing. Lines are written in batches (see LineAppender); the client flushes after every
    batch of requests, so a killed run loses at most its last second of lines, never half a line.
    """

    def __init__(self, path: Path, redactor: Redactor):
        self.path = Path(path)
        self._redact = redactor
        self._out = LineAppender()

    def write(self, record: dict[str, Any]) -> None:
        """Queue `record` (JSON-serialisable; non-JSON values are written as their str())."""
        self._out.add(self.path, self._redact(json.dumps(record, ensure_ascii=False, default=str)))

    def flush(self) -> None:
        """Write every queued line to the file now."""
        self._out.flush()


def read_exchanges(path: Path) -> list[dict[str, Any]]:
    """All records of an audit log, in order (an empty list when there is none)."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
