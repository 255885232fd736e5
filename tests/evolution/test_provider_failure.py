"""A provider that refuses every call ends the run as a failure, never as "no improvement found".

Invariants:
1. Every diagnoser call failing (here: a spool model nobody answers before its timeout) exits 1
   naming the error, and the run is recorded as failed (resumable).
"""

from __future__ import annotations

import copy
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app

from helpers.airline import CONFIG, build_repo


def test_every_diagnoser_call_failing_exits_1_and_records_a_failed_run(tmp_path: Path) -> None:
    config = copy.deepcopy(CONFIG)
    config["models"]["diagnoser"] = "spool/diagnoser"
    config["spool"] = {"timeout_s": 0.05, "poll_s": 0.01}
    repo = build_repo(tmp_path / "ws", config=config)

    result = CliRunner().invoke(app, ["evolve", "--repo", str(repo.root)])

    assert result.exit_code == 1, result.output
    assert "every diagnoser call of round 1 failed, first with:" in result.stderr
    assert "spool/diagnoser: gave up after 1 attempt(s)" in result.stderr and "spool: no answer in" in result.stderr
    from frames_cli.evolution.state.runs import list_runs
    from frames_cli.workspace.layout import Workspace

    (run,) = list_runs(Workspace.open(repo.root))
    assert run.status == "failed"
