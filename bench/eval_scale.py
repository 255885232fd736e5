"""Scale of `frames eval`: 10,000 cases through the built-in agent and the simulator at zero latency.

Cases are the bundled tau2 airline cases (real inputs of 3–17 k characters), repeated under new ids
up to --cases, written as JSON Lines into a temporary workspace with the bundled skills. The whole
path runs: load_cases → evaluate → BuiltinExecutor (catalog turn, load turn) → ModelClient (cache,
semaphore, ledger, audit log, schema validation) → litellm.completion → frames-sim executor.
Prints the wall time of each phase, the model calls, the time per call and the peak memory (RSS).
Targets (issue 4): well under a minute and under 1 GB for 10,000 cases.

Usage: python bench/eval_scale.py [--cases N] [--concurrency C] [--jobs J] [--no-cache] [--small]
  --small: use three short cases (about 100 characters of input) instead of the tau2 ones.
  --jobs: worker processes (`frames eval --jobs`); CPU time then includes the workers', and the
    memory line adds the largest worker's peak RSS times J to this process's (an upper bound of
    the sum over processes: Linux reports only the largest peak among children).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frames_cli.evaluation.parallel import WorkerSetup, evaluate_parallel  # noqa: E402
from frames_cli.evaluation.runner import EvalReport, evaluate  # noqa: E402
from frames_cli.executor.builtin import BuiltinExecutor  # noqa: E402
from frames_cli.formats.case import load_cases, write_cases  # noqa: E402
from frames_cli.formats.skill import SkillSet  # noqa: E402
from frames_cli.llm.client import ModelClient  # noqa: E402
from frames_cli.llm.ledger import Ledger  # noqa: E402
from frames_cli.llm.providers import litellm_module  # noqa: E402
from frames_cli.sim.world import SimWorld  # noqa: E402
from frames_cli.workspace.config import FramesConfig, ModelsConfig, with_overrides  # noqa: E402
from frames_cli.workspace.layout import Workspace  # noqa: E402

SMALL = [
    ("cancel", "Cancel my basic economy reservation ABC123, booked three days ago.", {"actions": []},
     "Basic economy reservations can be cancelled only within 24 hours of booking."),
    ("baggage", "I am a silver member flying economy with one companion. How many free checked bags?", "4",
     "Silver members get 2 free checked bags per passenger in economy."),
    ("compensation", "My flight was delayed by one hour. Can I get compensation?", "no",
     "Offer compensation for delays only when the delay is longer than three hours."),
]


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def workers_peak_rss_mb() -> float:
    """Largest peak resident memory among ended child processes in MB (0 before any ended)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def cpu_seconds() -> float:
    """User + system CPU time of this process (all threads) and of its ended children (seconds)."""
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


def run_eval(ws: Workspace, config: FramesConfig, cases: list, skills: SkillSet, run_dir: Path, jobs: int, use_cache: bool, world: SimWorld) -> tuple[EvalReport, dict]:
    """Evaluate in this process (jobs = 1) or in `jobs` workers; the report and the executor's ledger totals."""
    if jobs > 1:
        ledger = Ledger()
        report = evaluate_parallel(cases, skills, WorkerSetup(ws, config, run_dir, use_cache), jobs=jobs, ledger=ledger)
        return report, ledger.to_dict()["roles"]["executor"]
    with ModelClient(ws, config, run_dir=run_dir, use_cache=use_cache, sim_world=world) as client:
        report = evaluate(cases, skills, BuiltinExecutor(client, config.executor))
        return report, client.ledger.to_dict()["roles"]["executor"]


def memory(jobs: int) -> str:
    """This process's peak RSS, and with workers the bound on the sum over all processes."""
    if jobs == 1:
        return f"{peak_rss_mb():.0f} MB"
    own, worker = peak_rss_mb(), workers_peak_rss_mb()
    return f"{own:.0f} MB here + at most {jobs} × {worker:.0f} MB in workers = at most {own + jobs * worker:.0f} MB in all"


def make_cases(n: int, small: bool) -> list:
    """`n` cases: the bundled tau2 cases (or three short ones) repeated under new ids."""
    if small:
        from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task

        base = [
            Case(f"small-{i}", cat, Source("bench"), "", Task({"text": text, "fields": {}}, expected, Check("exact"), "JSON"), Diagnosis(evidence=[ev]))
            for i, (cat, text, expected, ev) in enumerate(SMALL)
        ]
    else:
        base = load_cases([ROOT / "cases" / "tau2-airline.yaml"])
    out = []
    for i in range(n):
        case = dataclasses.replace(base[i % len(base)], id=f"{base[i % len(base)].id}-r{i // len(base)}")
        out.append(case)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--write-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_only:
        write_cases(args.write_only, make_cases(args.cases, args.small))
        return

    tmp = Path(tempfile.mkdtemp(prefix="frames-eval-scale-"))
    try:
        (tmp / "cases").mkdir()
        (tmp / "frames.yaml").write_text("version: 1\n")
        shutil.copytree(ROOT / "skills", tmp / "skills")
        # Written by a child process, so this process's peak memory is what loading and evaluating take.
        writer = [sys.executable, __file__, "--cases", str(args.cases), "--write-only", str(tmp / "cases" / "bench.jsonl")]
        subprocess.run(writer + (["--small"] if args.small else []), check=True)
        ws = Workspace.open(tmp)
        config = FramesConfig(models=ModelsConfig(executor="frames-sim/executor", judge="frames-sim/judge"))
        config = with_overrides(config, "llm", concurrency=args.concurrency)
        litellm_module()  # import cost (seconds) is not evaluation time
        rss_before = peak_rss_mb()

        t0 = time.perf_counter()
        cases = load_cases([tmp / "cases" / "bench.jsonl"])
        skills = SkillSet.from_dir(tmp / "skills")
        t1, cpu1 = time.perf_counter(), cpu_seconds()
        # The simulator's world shares the loaded cases (as `frames eval` does) instead of reading them again.
        world = SimWorld.from_cases(cases)
        report, ledger = run_eval(ws, config, cases, skills, tmp / ".frames" / "evals" / "bench", args.jobs, not args.no_cache, world)
        t2, cpu2 = time.perf_counter(), cpu_seconds()

        calls = ledger["calls"]
        print(f"cases: {len(cases)} ({'short' if args.small else 'tau2 airline, repeated'}), skills: {len(skills)}, "
              f"concurrency: {args.concurrency}, jobs: {args.jobs}, cache: {'off' if args.no_cache else 'on (cold)'}")
        print(f"load cases + skills: {t1 - t0:.2f} s")
        print(f"evaluate: {t2 - t1:.2f} s wall, {calls} model calls, {1000 * (t2 - t1) / max(calls, 1):.2f} ms per call, "
              f"{len(cases) / (t2 - t1):.0f} cases/s")
        print(f"evaluate CPU time: {cpu2 - cpu1:.2f} s ({1000 * (cpu2 - cpu1) / max(calls, 1):.2f} ms per call); "
              f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"pass rate: {report.pass_rate:.1%}, mean tokens per case: {report.mean_tokens:.0f}")
        print(f"peak RSS: {memory(args.jobs)} (after importing litellm: {rss_before:.0f} MB)")
        figures = {"cases": len(cases), "jobs": args.jobs, "eval_s": round(t2 - t1, 2), "load_s": round(t1 - t0, 2), "calls": calls,
                   "eval_cpu_s": round(cpu2 - cpu1, 2), "peak_rss_mb": round(peak_rss_mb()), "worker_peak_rss_mb": round(workers_peak_rss_mb())}
        if not args.no_cache:
            # The re-run of `frames eval` on unchanged skills and cases: every answer from the cache.
            again, rerun = run_eval(ws, config, cases, skills, tmp / ".frames" / "evals" / "rerun", args.jobs, True, world)
            t3 = time.perf_counter()
            assert again.pass_rate == report.pass_rate
            print(f"warm re-run: {t3 - t2:.2f} s wall, {rerun['calls']} model calls; peak RSS now {memory(args.jobs)}")
            figures.update(rerun_s=round(t3 - t2, 2), rerun_calls=rerun["calls"], peak_rss_mb=round(peak_rss_mb()), worker_peak_rss_mb=round(workers_peak_rss_mb()))
        print(json.dumps(figures))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
