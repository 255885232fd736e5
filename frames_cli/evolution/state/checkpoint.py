"""Checkpoints of an evolve run: the loop's own progress (evolution/round/record.LoopMemory) inside
RunState.checkpoint, saved atomically after every step; and which run a later `frames evolve` resumes."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING, Any, Protocol

from frames_cli.evolution.state.runs import load_runs, save_state, state_written_ns

if TYPE_CHECKING:
    from frames_cli.evolution.state.records import RunState
    from frames_cli.workspace.layout import Workspace

#: Statuses of a run that a later `frames evolve` resumes.
UNFINISHED = ("running", "stopped")
#: Fault-injection hook for crash tests: after this many checkpoints in this process, the process
#: kills itself with SIGKILL (no clean-up runs, exactly like `kill -9`). Unset in normal use.
CRASH_ENV = "FRAMES_CRASH_AFTER_CHECKPOINTS"


class _Memory(Protocol):
    """The loop's memory as the checkpoint stores it (evolution/round/record.LoopMemory)."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, stored as RunState.checkpoint."""
        ...


class Checkpointer:
    """Writes a run's state (with the loop's memory as `checkpoint`) atomically into its run folder."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.saves = 0

    def save(self, state: RunState, memory: _Memory) -> None:
        """Write `state`; a reader or a resumed run sees the previous state or this one, never a mix."""
        state.checkpoint = memory.to_json()
        save_state(self.ws, state)
        self.saves += 1
        crash_after = os.environ.get(CRASH_ENV)
        if crash_after and self.saves >= int(crash_after):
            os.kill(os.getpid(), signal.SIGKILL)


def find_unfinished(ws: Workspace, base_sha: str) -> str | None:
    """Id of the newest unfinished run started from `base_sha`, or None (damaged runs are skipped)."""
    for state in reversed(load_runs(ws, problems=[])):
        if state.base == base_sha and state.status in UNFINISHED:
            return state.run_id
    return None


def latest_finished(ws: Workspace) -> RunState | None:
    """The run that finished last (any base), or None (damaged runs are skipped).

    By finish time, not the start order of `load_runs`: the up-to-date check asks which run's result
    is current, and a resumed older run can finish after a newer one."""
    done = [state for state in load_runs(ws, problems=[]) if state.status == "finished"]
    # Timestamps resolve to the second; the state file's write time orders runs that finished
    # within the same second (tests, or a cron run right after a manual one).
    return max(done, key=lambda s: (s.finished or "", state_written_ns(ws, s.run_id)), default=None)
