"""A problem found while checking a file: one line `path:line: severity: message`."""

from __future__ import annotations

from dataclasses import dataclass

from frames_cli.errors import Location


@dataclass(frozen=True)
class Problem:
    """One finding of `frames validate` or a loader.

    Attributes:
        location: file and 1-based line.
        message: what is wrong, in one line.
        severity: "error" (fails validate) or "warning" (fails only with --strict).
    """

    location: Location
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message}"
