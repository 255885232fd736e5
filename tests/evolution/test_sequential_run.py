"""The sequential noise-aware gate inside `frames evolve` (evolution/round/stages/gate.py, driver.py).

Invariants:
1. A child's gate that is not decided by its first k samples draws more (S0's samples of the cases
   the child has not passed, for the early-acceptance test, and the child's where still undecided:
   evolution/compare/sequential.py); they are kept apart from the rates (`gate_samples`), counted
   in the verdict (`sequential.drawn`), and are new model calls (in exchanges.jsonl, sample ≥ k),
   not cached repeats.
2. S0's extra samples are drawn once and shared by later children.
3. `frames review` says what was sampled further and why; the estimate's maximum holds the run's calls.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.evolution.run.driver import EvolveOptions, evolve
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.workspace.layout import Workspace

from helpers.airline import CONFIG, build_repo

K, MAX = 2, 8


def _config(seed: int) -> dict:
    config = copy.deepcopy(CONFIG)
    config["evolution"].update(gate="noise-aware", tolerance=0.0, gate_max_samples=MAX, seed=seed, attribution_steps=0)
    config["eval"] = {"samples": K}
    return config


def test_an_undecided_category_is_sampled_further_with_new_calls(tmp_path: Path) -> None:
    runner = CliRunner()
    # Which child's gate draws more depends on every prompt's wording: try a few seeds until one does.
    for seed in range(1, 7):
        repo = build_repo(tmp_path / str(seed), _config(seed))
        estimate = json.loads(runner.invoke(app, ["evolve", "--estimate", "--json", "--repo", str(repo.root)]).stdout)
        state = evolve(Workspace.open(repo.root), EvolveOptions()).state
        further = [c for c in state.candidates
                   if any((c.gate_details.get("sequential") or {}).get("drawn", {}).values())]
        if further:
            break
    assert further, "no child's gate drew samples in seeds 1-6: the test shows nothing"
    folder = repo.root / ".frames" / "runs" / state.run_id
    evals = {p.stem: json.loads(p.read_text()) for p in (folder / "evals").glob("*.json")}
    served = {(e["tag"], e["sample"]) for e in map(json.loads, (folder / "exchanges.jsonl").read_text().splitlines())
              if e["role"] == "executor"}
    base_drawn = 0
    for cand in (c for c in state.candidates if c.parent_id is not None):
        record = cand.gate_details["sequential"]
        assert record["looks"] == [2, 4, 8]
        extra = evals[cand.id]["gate_samples"]
        assert record.get("drawn", {}).get("child", 0) == len(extra)
        base_drawn += record.get("drawn", {}).get("baseline", 0)
        pairs = [(r["case_id"], r["sample"]) for r in extra]
        assert len(set(pairs)) == len(pairs) and all(K <= s < MAX for _, s in pairs)
        # The rates and the front see the first k samples only.
        assert {r["sample"] for r in evals[cand.id]["results"]} <= set(range(K))
        sampled = {c for c, s in record["categories"].items() if s["looks"] > 1}
        assert {r["category"] for r in extra} <= sampled
    s0_extra = evals[BASE_ID]["gate_samples"]
    assert base_drawn == len(s0_extra) > 0  # drawn once, reused by later children
    for r in [*s0_extra, *(r for c in further for r in evals[c.id]["gate_samples"])]:
        assert (r["case_id"], r["sample"]) in served  # a model call of its own, not a cached repeat
    ledger = json.loads((folder / "ledger.json").read_text())
    assert ledger["roles"]["executor"]["calls"] <= estimate["roles"]["executor"]["calls_max"]
    child = further[0]
    review = runner.invoke(app, ["review", f"{state.run_id}/{child.id}", "--markdown", "-", "--repo", str(repo.root)])
    assert review.exit_code == 0, review.output
    assert "**Sequential gate:** looks at 2 (α" in review.stdout
    assert "; early acceptance on 8 (β " in review.stdout  # the early-acceptance share of each step of S0's samples


def test_the_estimate_bounds_the_extra_samples_without_expecting_them(tmp_path: Path) -> None:
    runner = CliRunner()
    off = copy.deepcopy(_config(1))
    off["evolution"]["gate_max_samples"] = K
    estimates = {}
    for name, config in (("on", _config(1)), ("off", off)):
        repo = build_repo(tmp_path / name, config)
        estimates[name] = json.loads(runner.invoke(app,
                                                   ["evolve", "--estimate", "--json", "--repo", str(repo.root)]).stdout)
    on, off_ = estimates["on"]["roles"]["executor"], estimates["off"]["roles"]["executor"]
    assert on["calls"] == off_["calls"] and on["calls_max"] > off_["calls_max"]
    # S0 and every child may draw MAX − K more samples of every case (the gate's set here is all of E).
    rounds = CONFIG["evolution"]["max_rounds"]
    assert on["calls_max"] - off_["calls_max"] == (1 + rounds) * (MAX - K) * off_["calls_max"] // ((1 + rounds) * K)
    assert any("sequential gate" in note for note in estimates["on"]["notes"])
