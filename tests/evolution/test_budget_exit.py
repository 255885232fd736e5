"""A spent budget ends `frames eval` and `frames evolve` alike: exit 1, saying so (issue 29: eval exited 1,
evolve 0)."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from frames_cli.commands.app import app

from helpers.airline import CONFIG, build_repo


def test_a_spent_budget_exits_1_in_eval_and_in_evolve(tmp_path: Path) -> None:
    config = yaml.safe_load(yaml.safe_dump(CONFIG))
    config["budget"] = {"max_tokens": 3000}
    repo = build_repo(tmp_path / "ws", config)
    runner = CliRunner()
    evaluated = runner.invoke(app, ["eval", "--repo", str(repo.root)])
    evolved = runner.invoke(app, ["evolve", "--repo", str(repo.root)])
    assert (evaluated.exit_code, evolved.exit_code) == (1, 1)
    assert "budget" in evaluated.stderr and "error: the budget is spent" in evolved.stderr
