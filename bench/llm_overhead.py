"""Overhead of the model layer: 2,000 simulated calls of 50 ms at concurrency 32 (target ratio ≤ 1.2).

Each call goes the whole way: ModelClient (semaphore, cache lookup and write, retries wrapper,
ledger, audit log, JSON extraction and schema validation) → litellm.completion → the frames-sim
provider (executor behaviour on a two-turn prompt with skill blocks, 50 ms simulated latency).
Ideal time = calls × latency ÷ concurrency: what a layer costing nothing would take.

Measured for each `--processes` value (default 0 and 2): `llm.processes` = 0 makes the litellm
calls in the client's threads, under one GIL; > 0 in that many CallPool worker processes.

Usage: python bench/llm_overhead.py [--calls N] [--latency S] [--concurrency C] [--no-cache] [--repeat R]
[--processes P ...]

The machine's noise moves one run's ratio by ±0.1 (measured: 1.18–1.38 for unchanged code), so the
calls are made R times (new requests each time, so every run misses the cache) and the median
ratio is the figure; every run is printed. Memory: peak RSS of each process (shared pages count in
each) and the PSS summed over the client's process, its workers and their fork server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task
from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.llm.messages.prompts import render
from frames_cli.llm.messages.schemas import EXECUTOR_STEP
from frames_cli.sim.world import SimWorld
from frames_cli.workspace.config import FramesConfig, ModelsConfig, with_overrides
from frames_cli.workspace.layout import Workspace

RULES = [
    "Basic economy reservations can be cancelled only within 24 hours of booking.",
    "Silver members get 2 free checked bags per passenger in economy.",
    "Offer compensation for delays only when the delay is longer than three hours.",
    "Confirm the reservation id and the passenger name before any change.",
]


def world(n_cases: int) -> SimWorld:
    cases = [
        Case(
            id=f"case-{i}",
            category=f"cat-{i % 4}",
            source=Source("bench"),
            created="2026-11-29",
            task=Task({"text": f"Customer request number {i} about {RULES[i % 4].lower()}"}, "yes" if i % 2 else "no",
                      Check("exact")),
            diagnosis=Diagnosis(evidence=[RULES[i % 4]]),
        )
        for i in range(n_cases)
    ]
    return SimWorld.from_cases(cases)


def request(i: int) -> ChatRequest:
    catalog = "4 skills available:\n" + "\n".join(f"- s{k}: skill-{k} — {RULES[k][:40]}" for k in range(4))
    first = render("executor_catalog", case_id=f"case-{i % 200}", given="", catalog=catalog, request=f"Request {i}",
                   answer_format="yes or no", max_loads=3)
    blocks = "\n\n".join(f'<skill id="s{k}" name="skill-{k}">\n# Skill {k}\n\n- {RULES[k]}\n- Be brief.\n</skill>'
                         for k in range(2))
    second = render("executor_answer", case_id=f"case-{i % 200}", skills=blocks)
    messages = [{"role": "user", "content": first}, {"role": "assistant", "content": '{"load": ["s0", "s1"]}'},
                {"role": "user", "content": second}]
    return ChatRequest("executor", messages, EXECUTOR_STEP, sample=i)


def litellm_alone(client: ModelClient, requests: list[ChatRequest], concurrency: int) -> tuple[float, float]:
    """Wall and CPU time of the same calls straight through litellm.completion in `concurrency` threads:
    the floor set by litellm and the simulator, without the layer (no cache, ledger, audit, parsing)."""
    from concurrent.futures import ThreadPoolExecutor

    from frames_cli.llm.transport import providers

    litellm = providers.litellm_module()

    def one(req: ChatRequest) -> object:
        metadata = {providers.CTX_KEY: client._ctx, providers.SAMPLE_KEY: req.sample}
        return litellm.completion(
            model="frames-sim/executor", messages=req.messages, timeout=60, temperature=0.0, max_tokens=4096,
            metadata=metadata, **{"no-log": True}
        )

    with ThreadPoolExecutor(concurrency) as pool:
        start, cpu = time.perf_counter(), time.process_time()
        list(pool.map(one, requests))
        return time.perf_counter() - start, time.process_time() - cpu


def memory_mb(pid: int) -> tuple[float, float]:
    """(peak RSS, current PSS) of process `pid` in MB, from /proc (Linux); (nan, nan) elsewhere."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return float("nan"), float("nan")

    def kb(text: str, key: str) -> float:
        return next(int(line.split()[1]) for line in text.splitlines() if line.startswith(key + ":")) / 1024

    return kb(status, "VmHWM"), kb(rollup, "Pss")


def parent_of(pid: int) -> int:
    """The parent process id of `pid` (Linux /proc); `pid` itself where /proc is missing."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[1])
    except OSError:
        return pid


def measure(args: argparse.Namespace, processes: int) -> float:
    """Warm-up, then `args.repeat` runs of `args.calls` new requests with `llm.processes` = `processes`;
    prints every run and memory, returns the median ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "frames.yaml").write_text("version: 1\n")
        config = FramesConfig(models=ModelsConfig(executor="frames-sim/executor"))
        config = with_overrides(config, "llm", concurrency=args.concurrency, processes=processes)
        config = with_overrides(config, "simulator", latency_s=args.latency)
        ideal = args.calls * args.latency / args.concurrency
        warm_up = 2 * args.concurrency
        where = (
            f"{processes} worker process(es) for the litellm calls"
            if processes
            else "litellm in this process's threads"
        )
        print(f"--- llm.processes = {processes}: {where}")
        with ModelClient(Workspace.open(root), config, run_dir=root / "run", use_cache=not args.no_cache,
                         sim_world=world(200)) as client:
            # One-time costs out of the measurement: litellm's import and first-call set-up, the
            # worker threads' (and processes') start. Warm-up requests are never measured ones.
            client.chat_many([request(10**7 + i) for i in range(warm_up)])
            ratios = []
            for run in range(args.repeat):
                load = os.getloadavg()[0]
                requests = [request((processes * args.repeat + run) * args.calls + i) for i in range(args.calls)]
                start, cpu = time.perf_counter(), time.process_time()
                replies = client.chat_many(requests)
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
                ratios.append(wall / ideal)
                print(f"run {run + 1}: wall {wall:.3f} s, ratio {wall / ideal:.3f}, CPU of this process "
                      f"{cpu / args.calls * 1000:.2f} ms per call, failed {sum(not r.ok for r in replies)}, load "
                      f"average before {load:.2f} on {os.cpu_count()} CPUs")
            pids = client._processes.pids if client._processes else []
            workers = [memory_mb(pid) for pid in pids]
            # The fork server the workers came from holds the pages they share (litellm's import).
            servers = [memory_mb(pid) for pid in {parent_of(pid) for pid in pids} - {os.getpid()}]
            own = memory_mb(os.getpid())
            if not processes:
                floor, floor_cpu = litellm_alone(client, [request(10**6 + i) for i in range(args.calls)],
                                                 args.concurrency)
        print(f"ratio: median {statistics.median(ratios):.3f} of {args.repeat} runs, range "
              f"{min(ratios):.3f}–{max(ratios):.3f}  (target ≤ 1.2)")
        imported = (
            "litellm imported in this process" if "litellm" in sys.modules else "litellm never imported in this process"
        )
        print(
            f"memory ({imported}): this process peak RSS {own[0]:.0f} MB"
            + "".join(f", worker peak RSS {w[0]:.0f} MB" for w in workers)
            + "".join(f", fork server peak RSS {f[0]:.0f} MB" for f in servers)
            + f"; PSS summed over them after the runs {own[1] + sum(m[1] for m in workers + servers):.0f} MB"
        )
        if not processes:
            print(f"litellm + simulator alone in {args.concurrency} threads (no layer): ratio {floor / ideal:.3f}, CPU "
                  f"{floor_cpu / args.calls * 1000:.2f} ms per call")
        return statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--no-cache", action="store_true", help="leave the response cache out")
    parser.add_argument("--processes", type=int, nargs="+", default=[0, 2],
                        help="llm.processes values to measure, in order (default: 0 2)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="measured runs of --calls new requests each; the median ratio is the figure")
    args = parser.parse_args()
    print(f"calls: {args.calls}  latency: {args.latency * 1000:.0f} ms  concurrency: {args.concurrency}  cache: "
          f"{'off' if args.no_cache else 'on (cold)'}  warm-up: {2 * args.concurrency} calls  ideal time: "
          f"{args.calls * args.latency / args.concurrency:.3f} s (calls × latency ÷ concurrency)")
    medians = {processes: measure(args, processes) for processes in args.processes}
    print("median ratio by llm.processes: " + ", ".join(f"{p}: {m:.3f}" for p, m in medians.items()))


if __name__ == "__main__":
    main()
