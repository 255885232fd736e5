"""Batch mode (`llm.batch`, llm/transport/batch.py) against a local OpenAI-compatible server (bench/openai_server.py)
that answers with the simulator, through litellm's real OpenAI client.

Invariants:
1. `frames evolve` in batch mode, run again and again as cron would (exit 75 while a batch runs),
   ends with the same candidates, gate decisions and front as the same run made call by call, and
   its ledger prices the batched calls at the provider's batch price (half of it here).
2. While a batch is still running, a later `frames evolve` stops at once (exit 75) with a line
   naming the batch and since when, and makes no model call.
3. A batch line that fails is retried in a later batch, as a failed call is retried.
4. A batched role whose model has no batch API is named before the run and called one by one.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.openai_server import OpenAIServer, SimBackend
from frames_cli.commands.app import app
from frames_cli.evolution.run.driver import EvolveOptions, evolve
from frames_cli.llm.transport.batch import BatchPending
from frames_cli.llm.transport.batch_models import batch_notices
from frames_cli.workspace.config_file import parse_config
from frames_cli.workspace.layout import Workspace

from helpers.airline import CONFIG, build_repo, make_cases

MODELS = {"executor": "gpt-4.1-mini", "diagnoser": "gpt-4.1", "rewriter": "gpt-4o-mini", "judge": "gpt-4.1-nano"}


def _config(batch: bool) -> dict:
    config = copy.deepcopy(CONFIG)
    config["models"] = {role: f"openai/{name}" for role, name in MODELS.items()}
    config["llm"].update(batch=batch, api_base="http://127.0.0.1:1/v1")
    config["evolution"].update(max_rounds=1)
    return config


def _repo(root: Path, batch: bool):
    """The evolution tests' workspace, with two rules of each category (a dozen cases: every tick replays the run)."""
    cases = [c for c in make_cases() if c["id"].split("-")[1] in ("0", "1", "4", "5", "8", "9")]
    return build_repo(root, _config(batch), cases)


def _serve(root: Path, **kw: float) -> OpenAIServer:
    """A server answering with the simulator of workspace `root` (its settings as the workspace's CONFIG)."""
    server = OpenAIServer(SimBackend(root, {name: role for role, name in MODELS.items()}), **kw)
    text = (root / "frames.yaml").read_text().replace("http://127.0.0.1:1/v1", server.url)
    (root / "frames.yaml").write_text(text)
    return server


def _ticks(ws: Workspace, limit: int = 200) -> tuple[object, int]:
    """Run `evolve` until it ends without waiting; (its state, how many times it stopped for a batch)."""
    for waited in range(limit):
        try:
            return evolve(ws, EvolveOptions()).state, waited
        except BatchPending:
            continue
    raise AssertionError("batch mode never finished")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")


def _decisions(state) -> list:
    return [(c.id, c.gate_passed, c.pass_rate, c.changed_skills) for c in state.candidates], list(state.front)


def test_batch_mode_gives_the_synchronous_run_s_front_at_the_batch_price(tmp_path: Path) -> None:
    sync_repo, batch_repo = _repo(tmp_path / "sync", False), _repo(tmp_path / "batch", True)
    with _serve(sync_repo.root) as sync_server, _serve(batch_repo.root, fail_lines=3) as batch_server:
        sync_repo.git("commit", "-qam", "server"), batch_repo.git("commit", "-qam", "server")
        sync = evolve(Workspace.open(sync_repo.root), EvolveOptions()).state
        batched, waited = _ticks(Workspace.open(batch_repo.root))
    assert _decisions(batched) == _decisions(sync)
    assert waited > 3 and batch_server.stats["chat"] == 0 and sync_server.stats["batches"] == 0
    assert batch_server.stats["failed_lines"] == 3  # failed lines, answered in a later batch
    ledgers = [json.loads((r.root / ".frames" / "runs" / s.run_id / "ledger.json").read_text())
               for r, s in ((sync_repo, sync), (batch_repo, batched))]
    assert ledgers[1]["total_tokens"] == ledgers[0]["total_tokens"]
    assert ledgers[1]["total_usd"] == pytest.approx(ledgers[0]["total_usd"] / 2, rel=1e-9)
    assert ledgers[1]["roles"]["executor"]["batch_calls"] == ledgers[1]["roles"]["executor"]["calls"] > 0


def test_a_running_batch_stops_a_later_tick_at_once(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "ws", True)
    with _serve(repo.root, delay_s=60) as server:
        repo.git("commit", "-qam", "server")
        runner = CliRunner()
        first = runner.invoke(app, ["evolve", "--repo", str(repo.root)])
        assert first.exit_code == 75, first.output
        lines = server.stats["batch_lines"], server.stats["batches"]
        again = runner.invoke(app, ["evolve", "--repo", str(repo.root)])
    assert again.exit_code == 75
    assert (
        "waiting for 1 provider batch(es) since" in again.stderr
        and "batch-" in again.stderr
        and "in_progress" in again.stderr
    )
    assert (server.stats["batch_lines"], server.stats["batches"]) == lines and server.stats["chat"] == 0
    state = json.loads(next((repo.root / ".frames" / "runs").glob("*/state.json")).read_text())
    assert state["status"] == "stopped" and "batch-" in state["stop_reason"]


def test_a_role_without_a_batch_api_is_named_before_the_run() -> None:
    config = parse_config("models:\n  executor: frames-sim/executor\n  judge: openai/gpt-4.1-mini\nllm:\n  batch: "
                          "true\n")
    notices = batch_notices(config)
    assert len(notices) == 1 and "executor's model frames-sim/executor has no batch API" in notices[0]


def test_frames_eval_sends_every_chunk_of_a_stage_in_one_tick(tmp_path: Path) -> None:
    """260 cases are two chunks of the evaluation (256 + 4): the first tick sends both, and the
    report after the batches have ended equals the synchronous one."""
    cases = [{**c, "id": f"{c['id']}-{i}"} for i in range(14) for c in make_cases()][:260]
    reports = []
    for batch in (False, True):
        repo = build_repo(tmp_path / str(batch), _config(batch), cases)
        with _serve(repo.root) as server:
            runner, codes = CliRunner(), []
            while not codes or codes[-1] == 75:
                done = runner.invoke(app, ["eval", "--json", "--repo", str(repo.root)])
                codes.append(done.exit_code)
                if batch and len(codes) == 1:
                    assert done.exit_code == 75 and server.stats["batches"] == 2, done.output
                    while any(b["status"] != "completed" for b in server.batches.values()):
                        time.sleep(0.05)
            assert codes[-1] == 0, done.output
        reports.append([(r["case_id"], r["passed"], r["output"]) for r in json.loads(done.stdout)["results"]])
    assert reports[0] == reports[1]


def test_the_estimate_prices_batched_roles_at_the_batch_price(tmp_path: Path) -> None:
    estimates = []
    for batch in (False, ["executor"]):
        config = _config(False)
        config["llm"]["batch"] = batch
        repo = build_repo(tmp_path / str(bool(batch)), config)
        done = CliRunner().invoke(app, ["evolve", "--estimate", "--json", "--repo", str(repo.root)])
        assert done.exit_code == 0, done.output
        estimates.append(json.loads(done.stdout))
    plain, batched = estimates
    assert batched["tokens"] == plain["tokens"] and batched["usd"] < plain["usd"]
    assert any("llm.batch: executor" in note for note in batched["notes"])
    # Only the executor is batched: its share of the price is halved (gpt-4.1-mini: 0.4 / 1.6 $ → 0.2 / 0.8 $ per M).
    executor = plain["roles"]["executor"]
    saved = (executor["prompt_tokens"] * 0.2 + executor["completion_tokens"] * 0.8) / 1e6
    assert batched["usd"] == pytest.approx(plain["usd"] - saved, rel=1e-6)
