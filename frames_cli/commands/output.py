"""Printing for commands: rich consoles made on first use (so tests capture them) and JSON output."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def console() -> Console:
    """A rich console on the current `sys.stdout` (made per call: CliRunner swaps stdout)."""
    from rich.console import Console

    return Console(file=sys.stdout, highlight=False, soft_wrap=True)


def err_console() -> Console:
    """A rich console on the current `sys.stderr`."""
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False, soft_wrap=True)


def emit_json(obj: Any) -> None:
    """Print `obj` as indented JSON on stdout (for `--json`)."""
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n")
