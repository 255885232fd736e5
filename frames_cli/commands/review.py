"""`frames review` (being built; see the open issue)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add `frames review` to `app` (not yet built: registers nothing)."""
