"""`frames coldstart` (being built; see the open issue)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add `frames coldstart` to `app` (not yet built: registers nothing)."""
