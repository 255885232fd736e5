"""One frames.yaml setting as a dataclass field, and the bounds several sections share.

A field's `doc` metadata is the comment `frames init` writes and docs/settings.md shows; its other
metadata (`min`, `max`, `model`, `inside`, ...) are the checks workspace/config_file.py applies.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

#: Largest seed setting: seeds salt hashes and seed random generators; 2³² − 1 is numpy's and
#: every tool's largest, and a run's seed is shown and typed by people.
MAX_SEED = 2**32 - 1


def setting(default: Any, doc: str, **kw: Any) -> Any:
    """A dataclass field with `default` (a list or dict is copied per instance), `doc` and the checks `kw`."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"doc": doc, **kw})
    return field(default=default, metadata={"doc": doc, **kw})
