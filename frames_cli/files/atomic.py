"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `path` atomically (temp file in the same folder, fsync, rename, fsync folder).

    Creates missing parent folders. `mode` is applied before the rename because `mkstemp`
    creates files readable by the owner only.

    Raises:
        OSError: the folder is not writable or the disk is full; `path` is then unchanged. Its
            `filename` is `path`, not the temporary file, so messages name the file the user knows.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _naming(exc: OSError, path: Path) -> OSError:
    """`exc` re-made (same class and errno) to name `path` instead of a temporary file."""
    return type(exc)(exc.errno, exc.strerror, str(path)) if exc.errno is not None else exc


def atomic_write_text(path: Path, text: str, mode: int = 0o644) -> None:
    """Write UTF-8 `text` to `path` atomically, credentials redacted (`secretscan`: nothing frames
    writes holds an API key); see `atomic_write_bytes`."""
    from frames_cli.secretscan import REDACTED, redact_secrets

    atomic_write_bytes(path, redact_secrets(text, REDACTED).encode("utf-8"), mode)


def atomic_write_json(path: Path, obj: Any) -> str:
    """Write `obj` as indented, key-sorted JSON to `path` atomically, credentials in its strings
    redacted; see `atomic_write_bytes`. Returns the text written (what a later read would give)."""
    from frames_cli.secretscan import find_secrets, redact_data

    text = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    # One scan of the whole text (a state.json holds ~300,000 strings: one scan each cost 70 s per
    # bundled run); only when it finds something, redacted value by value, so JSON stays valid.
    if find_secrets(text):
        text = json.dumps(redact_data(obj), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))
    return text
