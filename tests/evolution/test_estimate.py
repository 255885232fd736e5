"""The spend estimate of `frames evolve` and `frames eval`, made before any model call.

Invariants:
1. `--estimate` calls no model and writes no run record, cache entry or eval folder.
2. A real run never makes more calls than the estimate's maximum, per role and in total.
3. A run whose estimate exceeds the budget says so before the first call.
4. The default token budget is one the bundled settings' estimate stays well inside.
5. The bound counts every sub-child attribution may make and every lost-result retry; the short
   run (stops at patience, children rejected at their first stage) is below the full run, and
   equals it when patience and early rejection cannot shorten anything.
6. An estimate of a run that would be refused for a missing model is refused the same way.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app

from helpers.airline import CONFIG, build_repo, make_cases


def _written(root: Path) -> list[Path]:
    state = root / ".frames"
    return sorted(p for p in state.rglob("*") if p.is_file() and p.name != ".gitignore") if state.is_dir() else []


def test_estimate_calls_no_model_and_writes_nothing(evolve_repo) -> None:
    runner = CliRunner()
    evolved = runner.invoke(app, ["evolve", "--estimate", "--json", "--repo", str(evolve_repo.root)])
    evaluated = runner.invoke(app, ["eval", "--estimate", "--json", "--repo", str(evolve_repo.root)])

    assert evolved.exit_code == 0 and evaluated.exit_code == 0, evolved.output + evaluated.output
    run, one = json.loads(evolved.stdout), json.loads(evaluated.stdout)
    assert _written(evolve_repo.root) == []
    assert set(run["roles"]) == {"executor", "diagnoser", "rewriter"} and set(one["roles"]) == {"executor"}
    assert 0 < run["calls"] <= run["calls_max"] and 0 < run["tokens"] <= run["max_tokens"]
    # S0 and one child per round at most: (1 + max_rounds) evaluations of what one eval costs.
    assert run["roles"]["executor"]["calls"] == (1 + CONFIG["evolution"]["max_rounds"]) * one["calls"]
    assert run["usd"] is not None and run["over_budget"] is False


def test_a_run_never_makes_more_calls_than_the_estimate_allows(evolve_repo) -> None:
    runner = CliRunner()
    estimate = json.loads(runner.invoke(app,
                                        ["evolve", "--estimate", "--json", "--repo", str(evolve_repo.root)]).stdout)

    result = runner.invoke(app, ["evolve", "--no-cache", "--json", "--repo", str(evolve_repo.root)])

    assert result.exit_code == 0, result.output
    (ledger_file,) = (evolve_repo.root / ".frames" / "runs").glob("*/ledger.json")
    ledger = json.loads(ledger_file.read_text())
    for role, totals in ledger["roles"].items():
        assert totals["calls"] <= estimate["roles"][role]["calls_max"], role
    assert sum(t["calls"] for t in ledger["roles"].values()) <= estimate["calls_max"]


def test_an_estimate_over_the_budget_is_said_before_the_first_call(tmp_path: Path) -> None:
    config = copy.deepcopy(CONFIG)
    config["budget"] = {"max_tokens": 2000}
    repo = build_repo(tmp_path / "ws", config=config)

    result = CliRunner().invoke(app, ["evolve", "--repo", str(repo.root)])

    assert result.exit_code == 1, result.output  # the budget ended the run: exit 1, as eval (issue 29)
    lines = result.stderr.splitlines()
    warning = next(i for i, line in enumerate(lines) if "the estimate exceeds the budget" in line)
    assert "budget.max_tokens 2,000" in lines[warning]
    first_stage = next(i for i, line in enumerate(lines) if "evaluating S0" in line)
    assert warning < first_stage
    assert "budget" in result.stdout  # the run stopped on it


def test_the_default_budget_holds_the_bundled_settings_with_room() -> None:
    from frames_cli.workspace.config import DEFAULT_MAX_TOKENS, FramesConfig

    assert FramesConfig().budget.max_tokens == DEFAULT_MAX_TOKENS
    root = Path(__file__).parents[2]
    result = CliRunner().invoke(app, ["evolve", "--estimate", "--json", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    estimate = json.loads(result.stdout)
    assert estimate["budget"]["max_tokens"] == DEFAULT_MAX_TOKENS
    assert estimate["tokens"] * 4 < DEFAULT_MAX_TOKENS


def _estimates(tmp_path: Path, **evolution) -> tuple[dict, dict]:
    """(evolve --estimate, eval --estimate) JSON for the test workspace with `evolution` overrides."""
    config = copy.deepcopy(CONFIG)
    config["evolution"].update(evolution)
    repo = build_repo(tmp_path / "ws", config=config)
    runner = CliRunner()
    run = runner.invoke(app, ["evolve", "--estimate", "--json", "--repo", str(repo.root)])
    one = runner.invoke(app, ["eval", "--estimate", "--json", "--repo", str(repo.root)])
    assert run.exit_code == 0 and one.exit_code == 0, run.output + one.output
    return json.loads(run.stdout), json.loads(one.stdout)


def test_the_bound_counts_sub_children_and_lost_result_retries(tmp_path: Path) -> None:
    from frames_cli.workspace.config import FramesConfig

    run, one = _estimates(tmp_path, max_rounds=3, attribution_steps=2)
    defaults = FramesConfig()
    per_case = (defaults.executor.max_turns + 1) * (1 + defaults.llm.repair_turns) * (1 + defaults.eval.lost_retries)
    assert one["calls_max"] == len(make_cases()) * per_case
    # S0, then per round the child and up to two sub-children, each evaluated in full at most.
    assert run["roles"]["executor"]["calls_max"] == (1 + 3 * 3) * one["calls_max"]


def test_the_short_run_stops_at_patience_and_rejects_children_early(tmp_path: Path) -> None:
    run, one = _estimates(tmp_path / "a", max_rounds=4, patience=2, early_rejection=True)
    short = run["short"]
    assert one["calls"] < short["calls"] < run["calls"] and short["tokens"] < run["tokens"]
    # Patience 2 of 4 rounds: half the full run's diagnoser calls; S0 in full and 8 cases (llm.concurrency) of each
    # child.
    assert short["roles"]["diagnoser"]["calls"] * 2 == run["roles"]["diagnoser"]["calls"]
    assert short["roles"]["executor"]["calls"] == one["calls"] + 2 * 8 * one["calls"] // len(make_cases())
    full, _ = _estimates(tmp_path / "b", max_rounds=4, patience=4, early_rejection=False)
    assert (full["short"]["calls"], full["short"]["tokens"]) == (
        full["calls"],
        full["tokens"],
    )  # nothing can end it sooner


def test_an_estimate_refuses_a_run_that_has_no_model(tmp_path: Path) -> None:
    """The estimate is of a run that would start: with a role unset the run refuses (exit 2), and
    so does its estimate, naming frames.yaml and the roles, instead of a price it cannot know."""
    config = copy.deepcopy(CONFIG)
    config["models"] = {**config["models"], "diagnoser": None, "rewriter": None}
    repo = build_repo(tmp_path / "ws", config=config)
    result = CliRunner().invoke(app, ["evolve", "--estimate", "--repo", str(repo.root)])
    assert result.exit_code == 2
    assert "frames.yaml" in result.output and "`models.diagnoser`, `models.rewriter`" in result.output
    assert _written(repo.root) == []
