"""Stopping rules of `frames evolve` (issue 5), on the simulator in real temporary git repositories.

Invariants:
1. A run stops, status "finished" and reason "patience", exactly `patience` rounds after the last
   round that added a front member, well before `max_rounds`.
2. A real `frames evolve` process sent SIGINT (SIGTERM) after its first checkpoint finishes the
   current step, saves, exits 130 (143) and leaves a consistent state with status "stopped"; the
   next `frames evolve` resumes that run id, keeps what it had, and finishes.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.evolution.round.record import LoopMemory
from frames_cli.evolution.run.driver import EvolveOptions, evolve
from frames_cli.evolution.run.loop import STAGES
from frames_cli.evolution.state.records import RunState
from frames_cli.evolution.state.runs import load_runs, read_state
from frames_cli.errors import Location
from frames_cli.workspace.layout import Workspace

from helpers.airline import CONFIG, EvolveRepo, build_repo


def _config(**evolution: int | float) -> dict:
    config = copy.deepcopy(CONFIG)
    config["evolution"].update(evolution)
    return config


@pytest.mark.parametrize("patience", [1, 2])
def test_patience_ends_the_run_after_that_many_rounds_without_a_new_front_member(tmp_path: Path, patience: int) -> None:
    max_rounds = 12
    repo = build_repo(tmp_path / "ws", _config(patience=patience, max_rounds=max_rounds))
    state = evolve(Workspace.open(repo.root), EvolveOptions()).state
    assert (state.status, state.stop_reason) == ("finished", "patience")
    assert state.round < max_rounds
    assert state.stale_rounds == patience
    # Front members only leave when a newer one dominates them, so once no round adds a member the
    # newest member's round is the last round that added one.
    last_fresh = max(c.round for c in state.front_candidates())
    assert state.round == last_fresh + patience
    assert state.finished is not None and state.checkpoint["pending"] is None


def _frames_evolve(repo: EvolveRepo) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "frames_cli", "evolve", "--repo", str(repo.root)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _state_after_first_checkpoint(repo: EvolveRepo, child: subprocess.Popen, timeout_s: float = 180.0) -> RunState:
    """Poll the run folder until a state.json records S0's evaluation (the loop's first checkpoint;
    the signal handlers are installed before it). The generous deadline only ends a stuck child:
    its start, litellm's import included, took 15 s and more on a loaded 2-core machine."""
    deadline = time.monotonic() + timeout_s
    runs = repo.root / ".frames" / "runs"
    while time.monotonic() < deadline:
        assert child.poll() is None, f"frames evolve ended before its first checkpoint: {child.communicate()}"
        for path in runs.glob("*/state.json") if runs.is_dir() else ():
            state = read_state(path)
            if state.candidates:
                return state
        time.sleep(0.01)
    child.kill()
    raise AssertionError(f"no checkpoint within {timeout_s} s")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_after_the_current_step_and_the_next_run_resumes(tmp_path: Path, sig: signal.Signals,
                                                                      code: int) -> None:
    # Three rounds after S0 take seconds (simulated latency included); the signal is sent within
    # 10 ms of S0's checkpoint, so it lands mid-run.
    config = _config(max_rounds=3, patience=3)
    config["simulator"] = {**config["simulator"], "latency_s": 0.01}
    repo = build_repo(tmp_path / "ws", config)
    head = repo.git("rev-parse", "HEAD")

    child = _frames_evolve(repo)
    seen = _state_after_first_checkpoint(repo, child)
    os.kill(child.pid, sig)
    out, err = child.communicate(timeout=180)
    assert child.returncode == code, err
    assert "resumable" in out

    (stopped,) = load_runs(Workspace.open(repo.root))
    assert stopped.run_id == seen.run_id
    assert (stopped.status, stopped.stop_reason, stopped.finished) == ("stopped", sig.name, None)
    assert stopped.round < 3
    memory = LoopMemory.from_json(stopped.checkpoint, Location(tmp_path))
    if memory.pending is not None:  # stopped mid-round: the finished stages are a prefix of the round
        assert memory.pending.done == list(STAGES[: len(memory.pending.done)])
    for cand in stopped.candidates:
        assert repo.git("cat-file", "-t", cand.commit) == "commit"
    assert set(stopped.front) <= {c.id for c in stopped.candidates}
    assert repo.git("rev-parse", "HEAD") == head and repo.git("status", "--porcelain") == ""

    # The second run goes in-process: it is the same command, and this process has litellm loaded.
    second = CliRunner().invoke(app, ["evolve", "--repo", str(repo.root), "--json"])
    assert second.exit_code == 0, second.output
    resumed = json.loads(second.stdout)
    assert (resumed["resumed"], resumed["run_id"], resumed["status"]) == (True, stopped.run_id, "finished")
    (finished,) = load_runs(Workspace.open(repo.root))
    assert finished.round == 3 or finished.stop_reason == "patience"
    kept = {c.id: c.commit for c in finished.candidates}
    assert all(kept[c.id] == c.commit for c in stopped.candidates if c.pass_rate is not None)
