"""The workspace lock across processes: refused at once with the holder named, released when it dies."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from frames_cli.errors import LockedError
from frames_cli.workspace.layout import Workspace
from frames_cli.workspace.lock import workspace_lock

HOLDER = """
import sys, time
from frames_cli.workspace.layout import Workspace
from frames_cli.workspace.lock import workspace_lock
with workspace_lock(Workspace.open(sys.argv[1]), "20261129-120000-c0ffee", "evolve"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_second_process_is_refused_and_a_killed_holder_releases(tmp_path: Path) -> None:
    (tmp_path / "frames.yaml").write_text("version: 1\n")
    ws = Workspace.open(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        start = time.monotonic()
        with pytest.raises(LockedError) as info:
            with workspace_lock(ws, "20261129-120500-beef01", "coldstart"):
                pass
        assert time.monotonic() - start < 1.0  # timeout 0: no waiting
        assert info.value.exit_code == 75
        assert str(info.value).startswith(f"{tmp_path}: locked by run 20261129-120000-c0ffee (`frames evolve`, pid "
                                          f"{holder.pid}, since ")
    finally:
        holder.kill()
        holder.wait()
    # The killed holder left its lock.json behind, but the OS released the lock itself.
    with workspace_lock(ws, "20261129-121000-beef02", "coldstart"):
        assert '"run_id": "20261129-121000-beef02"' in (tmp_path / ".frames" / "lock.json").read_text()
    assert not (tmp_path / ".frames" / "lock.json").exists()
