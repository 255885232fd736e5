"""The repository lock: one frames run at a time per workspace (DESIGN §10).

`.frames/lock` is a `filelock.FileLock` taken with `timeout=0`, so a second run fails at once
(cron skips quietly on exit 75) and a killed holder releases it with its process. Who holds it is
written beside it in `.frames/lock.json`, so the refusal can name the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from frames_cli.errors import LockedError
from frames_cli.files.atomic import atomic_write_json
from frames_cli.workspace.layout import Workspace


def _holder(ws: Workspace) -> str:
    try:
        info = json.loads((ws.state_dir / "lock.json").read_text(encoding="utf-8"))
        return f"run {info['run_id']} (`frames {info['command']}`, pid {info['pid']}, since {info['started']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another frames process"


@contextmanager
def workspace_lock(ws: Workspace, run_id: str, command: str) -> Iterator[None]:
    """Hold the workspace lock for the `with` block.

    Args:
        run_id: the id of this run, shown to anyone refused the lock.
        command: the frames command holding it ("coldstart", "evolve", …).

    Raises:
        LockedError: another process holds the lock (exit code 75); the one-line message names
            the run holding it.
    """
    from filelock import FileLock, Timeout

    ws.make_state_dir()
    lock = FileLock(str(ws.lock_path), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise LockedError(f"{ws.root}: locked by {_holder(ws)}; try again when it has finished") from None
    info = ws.state_dir / "lock.json"
    try:
        started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        atomic_write_json(info, {"run_id": run_id, "command": command, "pid": os.getpid(), "started": started})
        yield
    finally:
        info.unlink(missing_ok=True)
        lock.release()
