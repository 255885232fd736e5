"""Lines a person needs while frames waits on something outside
it: spool answers not yet written, a provider being retried.

Printed on stderr whether or not it is a terminal (a cron log should say why a run took an hour),
one line per kind of wait at most every `Notices.interval` seconds, so eight calls retried at once
make one line, not eight.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

#: Seconds a spool request waits before the first line about it.
SPOOL_NOTICE_AFTER_S = 2.0


def _stderr(line: str) -> None:
    # The current sys.stderr at each line: a test runner or a progress display may have swapped it.
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class Notices:
    """One line per key at most every `interval` seconds (thread-safe).

    Args:
        sink: where a line goes (default: the current `sys.stderr`).
        interval: seconds before the same key prints again.
    """

    def __init__(self, sink: Callable[[str], None] | None = None, interval: float = 30.0):
        self.sink = sink or _stderr
        self.interval = interval
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def say(self, key: str, text: str, *, now: float | None = None) -> bool:
        """Print `text` unless the line of `key` was printed less than `interval` seconds ago.

        Returns:
            Whether it was printed.
        """
        now = time.monotonic() if now is None else now
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.interval:
                return False
            self._last[key] = now
        self.sink(text)
        return True


class SpoolWaits:
    """The spool requests waiting for an answer file, so that one line says how many and where.

    Args:
        notices: where the line goes.
        after: seconds the oldest request waits before the first line (SPOOL_NOTICE_AFTER_S).
    """

    def __init__(self, notices: Notices, after: float = SPOOL_NOTICE_AFTER_S):
        self.notices = notices
        self.after = after
        self._since: dict[str, float] = {}
        self._lock = threading.Lock()

    def start(self, rid: str) -> None:
        """Request `rid` begins waiting."""
        with self._lock:
            self._since.setdefault(rid, time.monotonic())

    def done(self, rid: str) -> None:
        """Request `rid` got its answer, or stopped waiting."""
        with self._lock:
            self._since.pop(rid, None)

    def poll(self, folder: str) -> None:
        """Print the waiting line when the oldest request has waited `after` seconds (and then every
        `notices.interval` seconds while any waits)."""
        now = time.monotonic()
        with self._lock:
            if not self._since or now - min(self._since.values()) < self.after:
                return
            waiting, oldest = len(self._since), now - min(self._since.values())
        self.notices.say(
            "spool",
            f"spool: waiting for {waiting} answer{'s' if waiting != 1 else ''} in {folder} (each <id>.request.json is "
            f"answered by writing <id>.answer.txt beside it; oldest waiting {oldest:.0f} s)",
            now=now,
        )
