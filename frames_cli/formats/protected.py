"""Protected regions of a skill body: the one definition of the marker syntax, and where the markers are wrong."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PROTECTED_OPEN = "<!-- frames:protected -->"
PROTECTED_CLOSE = "<!-- /frames:protected -->"

#: Anything that reads as a marker, in any case or spacing; only the exact forms above are markers.
_MARKER_LIKE = re.compile(r"frames\s*:\s*protected", re.IGNORECASE)
#: A Markdown code fence line (CommonMark: up to three spaces, then ``` or ~~~).
_CODE_FENCE = re.compile(r"^[ ]{0,3}(?:```|~~~)")


def scan_protected(body: str) -> tuple[list[str], list[tuple[int, str]]]:
    """Find protected regions in a body: the one definition of the marker syntax (validate,
    coldstart and the rewrite guard all use it). A marker is `PROTECTED_OPEN` or `PROTECTED_CLOSE`
    alone on its line (surrounding spaces allowed); any other line naming `frames:protected` (no
    spaces, upper case, inline, extra words) is a problem. Lines inside fenced code blocks are
    code: neither markers nor problems (a fence line itself is text of the region it is in).

    Returns:
        (regions, problems): the text between each pair of markers, in order, and (1-based body
        line, message) for each nesting, unclosed, stray or malformed marker.
    """
    scan = _Scan()
    in_code = False
    for no, line in enumerate(body.splitlines(keepends=True), 1):
        marker = line.strip()
        if _CODE_FENCE.match(line):
            in_code = not in_code
        elif in_code:
            # A marker shown in fenced code (a policy documenting frames) is code, not a marker.
            scan.text(line)
            continue
        if marker not in (PROTECTED_OPEN, PROTECTED_CLOSE) and _MARKER_LIKE.search(line):
            # A near miss (`<!--frames:protected-->`, upper case, an inline region) would protect
            # nothing while its author believes it does: it is an error, never ignored.
            scan.problems.append(
                (
                    no,
                    f"not a protected-region marker: write `{PROTECTED_OPEN}` and `{PROTECTED_CLOSE}` "
                    "exactly, each alone on its line (inline regions are not supported)",
                )
            )
            continue
        if marker == PROTECTED_OPEN:
            scan.open(no)
        elif marker == PROTECTED_CLOSE:
            scan.close(no)
        else:
            scan.text(line)
    if scan.open_line is not None:
        scan.problems.append((scan.open_line, "protected region is never closed"))
    return scan.regions, scan.problems


@dataclass
class _Scan:
    """A scan of a body so far: the regions closed, the problems, and the open region's first line and text."""

    regions: list[str] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    open_line: int | None = None
    current: list[str] = field(default_factory=list)

    def text(self, line: str) -> None:
        """A line that is no marker: text of the open region, if any."""
        if self.open_line is not None:
            self.current.append(line)

    def open(self, no: int) -> None:
        """An opening marker at body line `no`."""
        if self.open_line is not None:
            self.problems.append(
                (no, f"protected region opened again before the one at body line {self.open_line} was closed")
            )
            return
        self.open_line, self.current = no, []

    def close(self, no: int) -> None:
        """A closing marker at body line `no`."""
        if self.open_line is None:
            self.problems.append((no, "`<!-- /frames:protected -->` without an opening marker"))
            return
        self.regions.append("".join(self.current))
        self.open_line = None


def protected_regions(body: str) -> list[str]:
    """Texts of the protected regions of `body`, in order (markers excluded).

    Raises:
        ValueError: the markers are not well formed (the message gives the body line).
    """
    regions, problems = scan_protected(body)
    if problems:
        line, msg = problems[0]
        raise ValueError(f"body line {line}: {msg}")
    return regions

