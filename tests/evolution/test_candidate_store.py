"""A run reads each kept evaluation once and plans each round child's changes once
(evolution/round/candidate_store.py), on the 3-round simulator workspace of tests/evolution/conftest.py."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.evolution.round import candidate_store


def test_a_run_reads_each_evaluation_once_and_plans_each_child_once(evolve_repo, monkeypatch) -> None:
    reads: Counter[str] = Counter()
    planned: Counter[str] = Counter()
    read_text = Path.read_text

    def counting_read(self: Path, *args, **kwargs) -> str:
        if self.parent.name == "evals" and self.suffix == ".json":
            reads[self.name] += 1
        return read_text(self, *args, **kwargs)

    plan = candidate_store.plan_changes

    def counting_plan(parent, outcomes, voted):
        planned[repr(outcomes)] += 1  # a round's rewrite outcomes name it: no two rounds share theirs
        return plan(parent, outcomes, voted)

    monkeypatch.setattr(Path, "read_text", counting_read)
    monkeypatch.setattr(candidate_store, "plan_changes", counting_plan)

    result = CliRunner().invoke(app, ["evolve", "--repo", str(evolve_repo.root), "--json"])

    assert result.exit_code == 0, result.output
    evals = sorted(p.name for p in evolve_repo.root.glob(".frames/runs/*/evals/*.json"))
    assert len(evals) >= 3, evals  # S0 and at least two children were evaluated: the test has something to count
    assert planned, "no round made a child"
    assert max(reads.values(), default=0) <= 1, reads
    assert max(planned.values()) == 1, planned
