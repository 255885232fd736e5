"""Asking a running evolve to stop after its current step: SIGINT/SIGTERM or the stop file."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


class StopRequest:
    """Asks the loop to stop after the current step: set by SIGINT/SIGTERM, or a stop file.

    Signals only set a flag (the handler does no I/O), so a model call or a git write in progress
    finishes and the state is saved before the run exits.
    """

    def __init__(self, stop_file: Path | None = None):
        self.stop_file = stop_file
        self.reason: str | None = None

    def install(self) -> Callable[[], None]:
        """Route SIGINT and SIGTERM to this request (main thread only); returns a function that
        puts the previous handlers back. A second signal goes to the previous handler at once."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

        def restore() -> None:
            for sig, old in previous.items():
                signal.signal(sig, old)

        def handler(signum: int, _frame: Any) -> None:
            if self.reason is not None:
                # A second signal means "now": hand it to the previous handler (Ctrl-C twice aborts).
                restore()
                signal.raise_signal(signum)
                return
            self.reason = signal.Signals(signum).name

        for sig in previous:
            signal.signal(sig, handler)
        return restore

    def requested(self) -> str | None:
        """The reason to stop, or None. A stop file is consumed when seen, so it stops one run."""
        if self.reason is None and self.stop_file is not None and self.stop_file.exists():
            self.stop_file.unlink(missing_ok=True)
            self.reason = "stop file"
        return self.reason
