"""A provider that refuses every call ends the run as a failure, never as "no improvement found".

Invariants:
1. Every diagnoser call failing (here: a model name the provider does not know) exits 1 naming the
   error, and the run is recorded as failed (resumable), with no candidate beyond S0.
"""

from __future__ import annotations

import copy
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app

from .conftest import CONFIG, build_repo


def test_every_diagnoser_call_failing_exits_1_and_records_a_failed_run(tmp_path: Path) -> None:
    config = copy.deepcopy(CONFIG)
    config["models"]["diagnoser"] = "frames-sim/no-such-role"
    repo = build_repo(tmp_path / "ws", config=config)

    result = CliRunner().invoke(app, ["evolve", "--repo", str(repo.root)])

    assert result.exit_code == 1, result.output
    assert "every diagnoser call of round 1 failed, first with:" in result.stderr
    assert "unknown simulated role 'no-such-role'" in result.stderr
    from frames_cli.evolution.records import list_runs
    from frames_cli.workspace.layout import Workspace

    (run,) = list_runs(Workspace.open(repo.root))
    assert run.status == "failed"
