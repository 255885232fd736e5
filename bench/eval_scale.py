"""Scale of `frames eval`: 10,000 cases through the built-in agent and the simulator at zero latency.

Cases are the bundled tau2 airline cases (real inputs of 3–17 k characters), repeated under new ids
up to --cases, written as JSON Lines into a temporary workspace with the bundled skills. The whole
path runs: load_cases → evaluate → BuiltinExecutor (catalog turn, load turn) → ModelClient (cache,
semaphore, ledger, audit log, schema validation) → litellm.completion → frames-sim executor.
Prints the wall time of each phase, the model calls, the time per call and the peak memory: the
peak of the summed PSS of this process and its workers, sampled every 0.2 s, and peak RSS.
Targets (issue 4): well under a minute and under 1 GB for 10,000 cases.

Usage: python bench/eval_scale.py [--cases N] [--concurrency C] [--jobs J] [--no-cache] [--small] [--backend ray
[--kill-after S]]
  --small: use three short cases (about 100 characters of input) instead of the tau2 ones.
  --jobs: worker processes (`frames eval --jobs`); CPU time then includes the workers'.
  --backend ray: the command agent (`executor.kind: command`, a shell script of about a millisecond
      a case) instead of the built-in one, on every case three times: in this process (--jobs 1),
      over 2 worker processes (--jobs 2), and as Ray tasks (`eval.backend: ray`) on a cluster of 2
      nodes of 1 CPU each started with `ray start` (bench/ray_cluster.py), one of whose task
      workers is killed with SIGKILL --kill-after seconds into the run. Prints the wall time per
      case of each beside the others, the cases lost, and whether the Ray run's report (every
      result) equals --jobs 1's.

Memory: the true total is the peak of the summed PSS (proportional set size: a page shared by n
processes counts 1/n in each; `/proc/<pid>/smaps_rollup`) over this process and its live
descendants, sampled every 0.2 s by a separate sampler process (a thread here would make
`evaluate_parallel` spawn its workers instead of forking them). A 0.2 s sampling can miss a peak
shorter than that. The peak-RSS lines are printed too: RSS counts shared pages in full in every
process, and for workers Linux reports only the largest peak among ended children, so
"jobs × that" is an upper bound, not a measure.
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
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frames_cli.evaluation.parallel import WorkerSetup, evaluate_parallel  # noqa: E402
from frames_cli.evaluation.runner import EvalReport, evaluate  # noqa: E402
from frames_cli.executor.builtin import BuiltinExecutor  # noqa: E402
from frames_cli.formats.case_files import load_cases, write_cases  # noqa: E402
from frames_cli.formats.skill_set import SkillSet  # noqa: E402
from frames_cli.llm.client.client import ModelClient  # noqa: E402
from frames_cli.llm.store.ledger import Ledger  # noqa: E402
from frames_cli.llm.transport.providers import litellm_module  # noqa: E402
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
    """Largest peak resident memory among ended child processes in MB (0 before any ended).

    The children are the workers and the process that wrote the cases file (about 440 MB for
    10,000 cases), so with fewer cases or no workers this is the writer's peak.
    """
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


#: Seconds between two samples of the summed PSS.
PSS_PERIOD_S = 0.2


def pss_kib(pid: int) -> int:
    """Proportional set size of process `pid` in KiB (0 when it has ended or cannot be read)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return 0


def descendants(root: int) -> list[int]:
    """Pids of the live descendants of `root` (by each process's parent pid in `/proc/<pid>/stat`)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except (FileNotFoundError, ProcessLookupError):
                continue
            # The command name (field 2) may hold spaces and parentheses: the parent pid follows its last ")".
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def sample_pss(root: int) -> None:
    """Sampler process: sum the PSS of `root` and its descendants (but this one) every PSS_PERIOD_S.

    Each line read on stdin is answered on stdout with the peak sum in KiB since the previous line
    (or the start), and the peak restarts from the current sum; it ends at the end of stdin.
    """
    lock = threading.Lock()
    peak = [0]

    def current() -> int:
        return sum(pss_kib(pid) for pid in [root, *descendants(root)] if pid != os.getpid())

    def loop() -> None:
        while True:
            total = current()
            with lock:
                peak[0] = max(peak[0], total)
            time.sleep(PSS_PERIOD_S)

    threading.Thread(target=loop, daemon=True).start()
    print("ready", flush=True)
    for _ in sys.stdin:
        now = current()
        with lock:
            print(max(peak[0], now), flush=True)
            peak[0] = now


class PssPeak:
    """A `sample_pss` process watching this process: `.mb()` is the peak summed PSS in MB since the last call."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--sample-pss", str(os.getpid())],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "ready\n"

    def mb(self) -> float:
        """Peak summed PSS (MB) since the previous call or the start."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("peak\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline()) / 1024

    def close(self) -> None:
        """End the sampler (it stops at the end of its stdin)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def cpu_seconds() -> float:
    """User + system CPU time of this process (all threads) and of its ended children (seconds)."""
    return sum(u.ru_utime + u.ru_stime
               for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


def run_eval(
    ws: Workspace,
    config: FramesConfig,
    cases: list,
    skills: SkillSet,
    run_dir: Path,
    jobs: int,
    use_cache: bool,
    world: SimWorld,
) -> tuple[EvalReport, dict]:
    """Evaluate in this process (jobs = 1) or in `jobs` workers; the report and the executor's ledger totals."""
    if jobs > 1:
        ledger = Ledger()
        report = evaluate_parallel(cases, skills, WorkerSetup(ws, config, run_dir, use_cache), jobs=jobs, ledger=ledger)
        return report, ledger.to_dict()["roles"]["executor"]
    with ModelClient(ws, config, run_dir=run_dir, use_cache=use_cache, sim_world=world) as client:
        report = evaluate(cases, skills, BuiltinExecutor(client, config.executor))
        return report, client.ledger.to_dict()["roles"]["executor"]


def memory(jobs: int, pss_mb: float) -> str:
    """The peak summed PSS, then this process's peak RSS and, with workers, the RSS bound on the sum."""
    own, worker = peak_rss_mb(), workers_peak_rss_mb()
    rss = f"peak RSS of this process {own:.0f} MB"
    if jobs > 1:
        rss += f", largest ended child's peak RSS {worker:.0f} MB (RSS bound on the sum: {own + jobs * worker:.0f} MB)"
    return (
        f"peak PSS summed over {'this process and its workers' if jobs > 1 else 'this process'}: {pss_mb:.0f} MB; {rss}"
    )


def make_cases(n: int, small: bool) -> list:
    """`n` cases: the bundled tau2 cases (or three short ones) repeated under new ids."""
    if small:
        from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task

        base = [
            Case(f"small-{i}", cat, Source("bench"), "",
                 Task({"text": text, "fields": {}}, expected, Check("exact"), "JSON"), Diagnosis(evidence=[ev]))
            for i, (cat, text, expected, ev) in enumerate(SMALL)
        ]
    else:
        base = load_cases([ROOT / "cases" / "tau2-airline.yaml"])
    out = []
    for i in range(n):
        case = dataclasses.replace(base[i % len(base)], id=f"{base[i % len(base)].id}-r{i // len(base)}")
        out.append(case)
    return out


#: The command agent of `--backend ray`: a POSIX shell script (about a millisecond a case, so the
#: figures are the backends' own cost), answering by case id: the short cases' expected answers,
#: every id ending in 7 wrong.
AGENT_SH = """#!/bin/sh
cat > /dev/null
case "$FRAMES_CASE_ID" in
  *7) echo '{"output": "wrong", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}' ;;
  small-1-*) echo '{"output": "4"}' ;;
  small-2-*) echo '{"output": "no"}' ;;
  *) echo '{"output": {"actions": []}}' ;;
esac
"""


def ray_main(args: argparse.Namespace, tmp: Path) -> None:
    """`--backend ray`: the command agent on every case with --jobs 1, --jobs 2 and on a local Ray
    cluster of 2 nodes (`ray start`, 1 CPU each), one of whose task workers is killed mid-run."""
    from ray_cluster import LocalCluster, kill_a_worker

    from frames_cli.executor.factory import make_executor
    from frames_cli.workspace.config import EvalConfig, ExecutorConfig

    (tmp / "agent.sh").write_text(AGENT_SH)
    ws = Workspace.open(tmp)
    config = with_overrides(FramesConfig(), "llm", concurrency=args.concurrency)
    config = dataclasses.replace(config,
                                 executor=ExecutorConfig(kind="command", command=["/bin/sh", str(tmp / "agent.sh")],
                                                         timeout_s=60))
    cases = load_cases([tmp / "cases" / "bench.jsonl"])
    skills = SkillSet.from_dir(tmp / "skills")
    walls: dict[str, float] = {}
    reports: dict[str, EvalReport] = {}
    for jobs in (1, 2):
        t0, c0 = time.perf_counter(), cpu_seconds()
        if jobs == 1:
            with ModelClient(ws, config, use_cache=False) as client:
                reports["jobs 1"] = evaluate(cases, skills, make_executor(ws, config, client),
                                             lost_retries=config.eval.lost_retries)
        else:
            reports["jobs 2"] = evaluate_parallel(cases, skills, WorkerSetup(ws, config, None, False), jobs=2)
        walls[f"jobs {jobs}"] = time.perf_counter() - t0
        print(
            f"--jobs {jobs}: {walls[f'jobs {jobs}']:.1f} s wall, {1000 * walls[f'jobs {jobs}'] / len(cases):.2f} ms "
            f"per case, CPU {cpu_seconds() - c0:.1f} s (this process and ended children)",
            flush=True,
        )
    nodes, slots = 2, args.concurrency
    with LocalCluster(nodes=nodes, cpus=1) as cluster:
        os.environ.update(RAY_ADDRESS=cluster.address, RAY_AUTH_MODE="token")
        ray_config = dataclasses.replace(config, eval=EvalConfig(backend="ray", ray_cpus=nodes / slots))
        with ModelClient(ws, ray_config, use_cache=False) as client:
            executor = make_executor(ws, ray_config, client)  # connects to the cluster (ray.init)
            done, killed = threading.Event(), []
            t0 = time.perf_counter()
            killer = kill_a_worker(cluster, args.kill_after, done, killed) if args.kill_after >= 0 else None
            reports["ray"] = evaluate(cases, skills, executor, lost_retries=ray_config.eval.lost_retries)
            walls["ray"] = time.perf_counter() - t0
            done.set()
            if killer:
                killer.join()
        import ray

        ray.shutdown()
    same = [r.to_dict() for r in reports["ray"].results] == [r.to_dict() for r in reports["jobs 1"].results]
    same2 = [r.to_dict() for r in reports["jobs 2"].results] == [r.to_dict() for r in reports["jobs 1"].results]
    per = {k: 1000 * v / len(cases) for k, v in walls.items()}
    print(f"ray ({nodes} nodes started with `ray start`, 1 CPU each, {slots} agents at once): {walls['ray']:.1f} s "
          f"wall, {per['ray']:.2f} ms per case against {per['jobs 2']:.2f} ms with --jobs 2 (overhead "
          f"{per['ray'] - per['jobs 2']:+.2f} ms per case) and {per['jobs 1']:.2f} ms with --jobs 1")
    print(f"killed worker: {'pid ' + str(killed[0]) if killed else 'none'}; lost cases: {len(reports['ray'].lost())}; "
          f"same report as --jobs 1: {'yes' if same else 'NO'} (--jobs 2: {'yes' if same2 else 'NO'}); "
          f"pass rate {reports['ray'].pass_rate:.1%} over {len(cases)} cases")
    print(json.dumps({"cases": len(cases), "wall_s": {k: round(v, 2) for k, v in walls.items()},
                      "ms_per_case": {k: round(v, 3) for k, v in per.items()},
                      "killed": killed, "lost": len(reports["ray"].lost()), "same_report": same}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="ray: the command agent with --jobs 1, --jobs 2 and on a 2-node local Ray cluster (needs "
                             "frames-cli[ray])")
    parser.add_argument("--kill-after", type=float, default=5.0,
                        help="with --backend ray: seconds into the Ray run when one task worker is killed (-1: none)")
    parser.add_argument("--write-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sample-pss", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sample_pss:
        sample_pss(args.sample_pss)
        return
    if args.write_only:
        write_cases(args.write_only, make_cases(args.cases, args.small))
        return

    tmp = Path(tempfile.mkdtemp(prefix="frames-eval-scale-"))
    try:
        (tmp / "cases").mkdir()
        (tmp / "frames.yaml").write_text("version: 1\n")
        shutil.copytree(ROOT / "skills", tmp / "skills")
        # Written by a child process, so this process's peak memory is what loading and evaluating take.
        writer = [sys.executable, __file__, "--cases", str(args.cases), "--write-only",
                  str(tmp / "cases" / "bench.jsonl")]
        subprocess.run(writer + (["--small"] if args.small else []), check=True)
        if args.backend == "ray":
            ray_main(args, tmp)
            return
        ws = Workspace.open(tmp)
        config = FramesConfig(models=ModelsConfig(executor="frames-sim/executor", judge="frames-sim/judge"))
        config = with_overrides(config, "llm", concurrency=args.concurrency)
        # A scale test spends ~90 M simulated tokens on 10,000 cases: beyond the default budget.
        config = with_overrides(config, "budget", max_tokens=None)
        litellm_module()  # import cost (seconds) is not evaluation time
        rss_before = peak_rss_mb()
        pss = PssPeak()

        t0 = time.perf_counter()
        cases = load_cases([tmp / "cases" / "bench.jsonl"])
        skills = SkillSet.from_dir(tmp / "skills")
        t1, cpu1 = time.perf_counter(), cpu_seconds()
        # The simulator's world shares the loaded cases (as `frames eval` does) instead of reading them again.
        world = SimWorld.from_cases(cases)
        report, ledger = run_eval(ws, config, cases, skills, tmp / ".frames" / "evals" / "bench", args.jobs,
                                  not args.no_cache, world)
        t2, cpu2 = time.perf_counter(), cpu_seconds()
        pss_mb = pss.mb()

        calls = ledger["calls"]
        print(f"cases: {len(cases)} ({'short' if args.small else 'tau2 airline, repeated'}), skills: {len(skills)}, "
              f"concurrency: {args.concurrency}, jobs: {args.jobs}, cache: {'off' if args.no_cache else 'on (cold)'}")
        print(f"load cases + skills: {t1 - t0:.2f} s")
        print(f"evaluate: {t2 - t1:.2f} s wall, {calls} model calls, {1000 * (t2 - t1) / max(calls, 1):.2f} ms per "
              f"call, {len(cases) / (t2 - t1):.0f} cases/s")
        print(f"evaluate CPU time: {cpu2 - cpu1:.2f} s ({1000 * (cpu2 - cpu1) / max(calls, 1):.2f} ms per call); "
              f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"pass rate: {report.pass_rate:.1%}, mean tokens per case: {report.mean_tokens:.0f}")
        print(f"memory (load + evaluate): {memory(args.jobs, pss_mb)} (after importing litellm: {rss_before:.0f} MB)")
        figures = {"cases": len(cases), "jobs": args.jobs, "eval_s": round(t2 - t1, 2), "load_s": round(t1 - t0, 2),
                   "calls": calls,
                   "eval_cpu_s": round(cpu2 - cpu1, 2), "peak_pss_sum_mb": round(pss_mb),
                   "peak_rss_mb": round(peak_rss_mb()),
                   "worker_peak_rss_mb": round(workers_peak_rss_mb())}
        if not args.no_cache:
            # The re-run of `frames eval` on unchanged skills and cases: every answer from the cache.
            again, rerun = run_eval(ws, config, cases, skills, tmp / ".frames" / "evals" / "rerun", args.jobs, True,
                                    world)
            t3 = time.perf_counter()
            rerun_pss_mb = pss.mb()
            assert again.pass_rate == report.pass_rate
            print(f"warm re-run: {t3 - t2:.2f} s wall, {rerun['calls']} model calls; memory: "
                  f"{memory(args.jobs, rerun_pss_mb)}")
            figures.update(rerun_s=round(t3 - t2, 2), rerun_calls=rerun["calls"],
                           rerun_peak_pss_sum_mb=round(rerun_pss_mb),
                           peak_rss_mb=round(peak_rss_mb()), worker_peak_rss_mb=round(workers_peak_rss_mb()))
        pss.close()
        print(json.dumps(figures))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
