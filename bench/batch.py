"""Batch mode end to end: the bundled run through a provider's batch API against the same run made call by call.

A local OpenAI-compatible server (bench/openai_server.py: chat completions, files and batches,
answered by frames' simulator) stands in for the provider; frames reaches it through litellm's
real OpenAI client (`llm.api_base`). Each role gets an OpenAI model name whose regular and batch
prices litellm's price table knows (executor gpt-4.1-mini, diagnoser gpt-4.1, rewriter
gpt-4o-mini, judge gpt-4.1-nano; the simulator answers for the role). Two copies of the bundled
example, committed as HEAD has them:

  synchronous   `frames evolve` once, `llm.batch: false`.
  batch         `llm.batch: true`, `frames evolve` run as a cron job would run it, one process
                per tick, until it exits 0: a tick that finds a batch still running must exit 75
                at once ("at once": no model call; its wall time is printed), and one tick (the
                --kill-tick-th that does work) is killed with SIGKILL --kill-after seconds in. The
                server answers each batch --delay seconds after it is created; the tick after one
                that sent a batch starts at once (and finds it running), the one after that once
                the server has answered.

Prints `same-front=yes|no price-ratio=<batch ledger USD ÷ synchronous ledger USD>` (the runs'
candidates, gate decisions, pass rates and front, compared one by one), then the ticks, the
batches and lines the server answered, and both ledgers. `--max-rounds` (default 2) keeps the
number of ticks moderate; `--max-rounds 0` uses the bundled example's own.

Usage: python bench/batch.py [--max-rounds N] [--delay S] [--kill-tick K] [--kill-after S] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ablation import commit_all  # noqa: E402
from openai_server import OpenAIServer, SimBackend  # noqa: E402

EXAMPLE = ("frames.yaml", "policies", "skills", "cases", "holdout")
MODELS = {"executor": "gpt-4.1-mini", "diagnoser": "gpt-4.1", "rewriter": "gpt-4o-mini", "judge": "gpt-4.1-nano"}
FRAMES = [sys.executable, "-m", "frames_cli"]


def example_copy(into: Path, url: str, batch: bool, args: argparse.Namespace) -> Path:
    """The bundled example at HEAD in a new git repo, its roles on the server's OpenAI model names."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "HEAD", *EXAMPLE], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    config = yaml.safe_load((into / "frames.yaml").read_text())
    config["models"] = {role: (f"openai/{MODELS[role]}" if role in MODELS else None) for role in config["models"]}
    config["llm"].update(api_base=url, batch=batch)
    config["evolution"]["seed"] = config["simulator"]["seed"] = args.seed
    if args.max_rounds:
        config["evolution"]["max_rounds"] = args.max_rounds
    (into / "frames.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    commit_all(into, "bundled example")
    return into


def frames(root: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([*FRAMES, "evolve", "--json", "--repo", str(root)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)


def outcome(root: Path) -> tuple[list, list, dict]:
    """(candidates as (id, gate passed, pass rate, tokens per case, changed skills), front, ledger) of the
    workspace's one run."""
    folder = next((root / ".frames" / "runs").iterdir())
    state = json.loads((folder / "state.json").read_text())
    cands = [(c["id"], c.get("gate_passed"), c.get("pass_rate"), c.get("mean_tokens"), c.get("changed_skills"))
             for c in state["candidates"]]
    return cands, state["front"], json.loads((folder / "ledger.json").read_text())


def run_tick(batch_root: Path, env: dict[str, str], kill_after: float | None) -> tuple[int, float, str]:
    """One `frames evolve` tick: (exit code, seconds, stderr); killed with SIGKILL after `kill_after`
    seconds when given."""
    started = time.perf_counter()
    proc = frames(batch_root, env)
    if kill_after is not None:
        try:
            proc.wait(kill_after)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    _, err = proc.communicate()
    return proc.returncode, time.perf_counter() - started, err


def tick_until_done(batch_root: Path, batch_server: OpenAIServer, env: dict[str, str],
                    args: argparse.Namespace) -> list[tuple[int, float, str]]:
    """Run `frames evolve` in batch mode as a scheduler would until it finishes, killing the
    --kill-tick-th tick that works after --kill-after seconds; each tick as (exit code, seconds, what
    it did). A tick that sent a batch is followed at once by one that finds it running; otherwise the
    next waits for the server to finish its batches."""
    ticks: list[tuple[int, float, str]] = []
    worked, probe = 0, False
    while True:
        batches_before = batch_server.stats["batches"]
        kill = worked + 1 == args.kill_tick and batch_server.stats["batches"]
        code, seconds, err = run_tick(batch_root, env, args.kill_after if kill else None)
        if code == -signal.SIGKILL:
            ticks.append((code, seconds, "killed"))
            worked += 1
            continue
        if code == 0:
            ticks.append((0, seconds, "finished"))
            break
        if code != 75:
            raise SystemExit(f"a batch-mode tick failed ({code}): {err[-2000:]}")
        sent = batch_server.stats["batches"] != batches_before
        waiting = "waiting for" in err
        ticks.append((75, seconds, "sent a batch" if sent else "batch running"))
        worked += ticks[-1][2] != "batch running"
        if not waiting:
            raise SystemExit(f"exit 75 without saying what it waits for: {err[-500:]}")
        if sent and not probe:
            probe = True  # the next tick starts at once, while the server is still on the batch
            continue
        probe = False
        while any(b["status"] in ("validating", "in_progress") for b in list(batch_server.batches.values())):
            time.sleep(0.2)
        if len(ticks) > 2000:
            raise SystemExit("batch mode did not finish in 2,000 ticks")
    return ticks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-rounds", type=int, default=2,
                        help="evolution.max_rounds of both runs (0: the bundled example's)")
    parser.add_argument("--delay", type=float, default=15.0, help="seconds the server takes to answer a batch")
    parser.add_argument("--kill-tick", type=int, default=3,
                        help="the tick (counting those that do work) killed with SIGKILL")
    parser.add_argument("--kill-after", type=float, default=4.0, help="seconds into that tick")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    env = {**os.environ, "OPENAI_API_KEY": "sk-local-bench", "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="frames-batch-bench-") as tmp:
        tmp_path = Path(tmp)
        roles = {name: role for role, name in MODELS.items()}
        # One server per workspace: the simulator answers from that workspace's cases.
        sync_root = example_copy(tmp_path / "sync", "http://127.0.0.1:0/v1", False, args)
        batch_root = example_copy(tmp_path / "batch", "http://127.0.0.1:0/v1", True, args)
        with (
            OpenAIServer(SimBackend(sync_root, roles)) as sync_server,
            OpenAIServer(SimBackend(batch_root, roles), delay_s=args.delay) as batch_server,
        ):
            for root, server in ((sync_root, sync_server), (batch_root, batch_server)):
                text = (root / "frames.yaml").read_text().replace("http://127.0.0.1:0/v1", server.url)
                (root / "frames.yaml").write_text(text)
                commit_all(root, "server address")
            proc = frames(sync_root, env)
            out, err = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"the synchronous run failed ({proc.returncode}): {err[-2000:]}")
            sync_s = time.perf_counter() - started
            ticks = tick_until_done(batch_root, batch_server, env, args)
        sync, batch = outcome(sync_root), outcome(batch_root)
    same = sync[:2] == batch[:2]
    ratio = batch[2]["total_usd"] / sync[2]["total_usd"]
    print(f"same-front={'yes' if same else 'no'} price-ratio={ratio:.3f}")
    running = [s for code, s, what in ticks if what == "batch running"]
    killed = [s for code, s, what in ticks if what == "killed"]
    print(f"ticks: {len(ticks)} ({sum(1 for t in ticks if t[2] == 'sent a batch')} sent batches, {len(running)} found "
          f"a batch still running and exited 75 in {max(running, default=0):.1f} s at most, {len(killed)} killed with "
          f"SIGKILL after {args.kill_after:g} s, 1 finished); server: {batch_server.stats['batches']} batches, "
          f"{batch_server.stats['batch_lines']} lines, {batch_server.stats['chat']} synchronous calls; synchronous "
          f"run: {sync_server.stats['chat']} calls")
    for label, (_, _, ledger) in (("synchronous", sync), ("batch", batch)):
        calls = sum(r["calls"] for r in ledger["roles"].values())
        batched = sum(r.get("batch_calls", 0) for r in ledger["roles"].values())
        print(f"  {label:<12} ledger ${ledger['total_usd']:.6f}, {ledger['total_tokens']:,} tokens, {calls} calls "
              f"({batched} in batches)")
    print(f"  candidates {len(sync[0])} / {len(batch[0])}, front {sync[1]} / {batch[1]}; wall: synchronous "
          f"{sync_s:.0f} s, total {time.perf_counter() - started:.0f} s")
    if not same:
        print(json.dumps({"synchronous": sync[:2], "batch": batch[:2]}, indent=1))
    shutil.rmtree(tmp_path, ignore_errors=True)


if __name__ == "__main__":
    main()
