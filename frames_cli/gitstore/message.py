"""Commit messages: the summary, body and trailer block frames writes, and trailers as git prints them."""

from __future__ import annotations

import re

from frames_cli.sanitize import clean, one_line
from frames_cli.secretscan import REDACTED, redact_secrets

_TRAILER_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*$")


def commit_message(summary: str, body: str = "", trailers: dict[str, str] | None = None) -> str:
    """A commit message: `summary` line, blank line, `body`, blank line, one `Key: value` line per trailer.

    Trailers are what `git interpret-trailers` and `GitStore.trailers` read back (frames uses
    `Frames-Run`, `Frames-Parent`, `Frames-Models`; see docs/decisions/0004-trailers-and-notes.md).

    Control, bidirectional and zero-width characters are removed from every part (`sanitize.clean`;
    the summary and trailer values are also kept on one line).

    Raises:
        ValueError: `summary` is blank or has a line break, a trailer key is not `[A-Za-z0-9-]+`, or a
            trailer value has a line break.
    """
    if not summary.strip() or "\n" in summary:
        raise ValueError(f"commit summary must be one non-blank line: {summary!r}")
    # File names, headings and model text reach messages: no control, bidi or zero-width character
    # (git refuses NUL; the rest would act on a reviewer's terminal in `git log`).
    summary, body = one_line(summary), redact_secrets(clean(body), REDACTED)
    parts = [summary.strip()]
    if body.strip():
        parts.append(body.strip("\n"))
    if trailers:
        lines = []
        for key, value in trailers.items():
            if not _TRAILER_KEY.match(key):
                raise ValueError(f"bad trailer key {key!r}")
            if "\n" in value or "\r" in value:
                raise ValueError(f"trailer {key} value has a line break")
            lines.append(f"{key}: {one_line(value)}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def parse_trailers(text: str) -> dict[str, str]:
    """`Key: value` lines (git's `%(trailers:only,unfold)`) as {key: value}; the last of a repeated key wins."""
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
