"""Stop requests: SIGINT/SIGTERM only set a flag (the loop finishes its step); a stop file is consumed."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from frames_cli.evolution.round.stop import StopRequest


def test_sigterm_sets_the_reason_and_handlers_are_restored(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    stop = StopRequest(tmp_path / "STOP")
    restore = stop.install()
    try:
        assert stop.requested() is None
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.requested() == "SIGTERM"
    finally:
        restore()
    assert signal.getsignal(signal.SIGTERM) is before


def test_stop_file_is_seen_once_and_removed(tmp_path: Path) -> None:
    (tmp_path / "STOP").touch()
    stop = StopRequest(tmp_path / "STOP")
    assert stop.requested() == "stop file"
    assert not (tmp_path / "STOP").exists()
    assert StopRequest(tmp_path / "STOP").requested() is None


def test_second_sigint_aborts_at_once(tmp_path: Path) -> None:
    import pytest

    stop = StopRequest(tmp_path / "STOP")
    restore = stop.install()
    try:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.requested() == "SIGINT"
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        restore()
