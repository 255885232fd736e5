"""`evaluate_parallel`: worker processes give the in-process report, share the cache, merge their ledgers,
and a forked worker takes its cases from the memory it inherited rather than being sent them."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import multiprocessing.queues
import os
import pickle
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from frames_cli.errors import BudgetExceeded
from frames_cli.evaluation import parallel
from frames_cli.evaluation.allocator import fill_allocator_holes, free_small_blocks
from frames_cli.evaluation.parallel import WorkerSetup, evaluate_parallel, pickled_chunks
from frames_cli.evaluation.runner import evaluate
from frames_cli.executor.builtin import BuiltinExecutor
from frames_cli.formats.case_files import load_cases
from frames_cli.formats.skill_set import SkillSet
from frames_cli.llm.store.audit import read_exchanges
from frames_cli.llm.client.client import ModelClient
from frames_cli.llm.store.ledger import Ledger
from frames_cli.sim.world import SimWorld

ROOT = Path(__file__).resolve().parents[2]
N_CASES = 20


@pytest.fixture
def cases():
    return load_cases([ROOT / "cases" / "tau2-airline.yaml"])[:N_CASES]


@pytest.fixture
def skills():
    return SkillSet.from_dir(ROOT / "skills")


@pytest.fixture
def sent_to_workers(monkeypatch) -> list[int]:
    """Sizes (bytes) of the pickles this process sends to worker processes (their task queue)."""
    sizes: list[int] = []
    pickler = multiprocessing.queues._ForkingPickler
    dumps = pickler.dumps

    def recorded(obj, protocol=None):
        data = dumps(obj, protocol)
        sizes.append(len(data))
        return data

    monkeypatch.setattr(pickler, "dumps", recorded)
    return sizes


def carried_besides_cases(skills, setup: WorkerSetup) -> int:
    """Bytes of what every task sent to a worker holds besides its cases: the skills and the setup."""
    return len(pickle.dumps((skills, setup), pickle.HIGHEST_PROTOCOL))


def in_process(sim_workspace, config, cases, skills, run_dir: Path, samples: int):
    with ModelClient(sim_workspace.workspace, config, run_dir=run_dir, use_cache=False,
                     sim_world=SimWorld.from_cases(cases)) as client:
        report = evaluate(cases, skills, BuiltinExecutor(client, config.executor), samples=samples)
    return report, json.loads((run_dir / "ledger.json").read_text())


def test_two_workers_give_the_report_of_one_process_the_summed_ledger_and_share_the_cache(
    sim_workspace, cases, skills, tmp_path: Path, monkeypatch, sent_to_workers
) -> None:
    # Chunks of 3 cases: each forked worker unpickles and evaluates its 10 cases in 4 chunks.
    monkeypatch.setattr(parallel, "PROGRESS_CHUNK", 3)
    config = sim_workspace.config
    setup = WorkerSetup(sim_workspace.workspace, config, tmp_path / "two")
    ledger = Ledger()
    seen: list[int] = []
    two = evaluate_parallel(cases, skills, setup, jobs=2, samples=2, ledger=ledger, progress=lambda done,
                            total: seen.append(done))
    one, one_ledger = in_process(sim_workspace, config, cases, skills, tmp_path / "one", samples=2)
    assert [r.to_dict() for r in two.results] == [r.to_dict() for r in one.results]
    assert two.to_json() == one.to_json()
    assert 0 < one.pass_rate < 1
    # Equal totals; USD only up to float rounding, as the workers' sums are added in another order.
    merged = ledger.to_dict()["roles"]
    assert merged == {role: {**t, "cost_usd": pytest.approx(t["cost_usd"])} for role, t in one_ledger["roles"].items()}
    assert merged["executor"]["calls"] == N_CASES * 2 * 2
    # Both workers appended to one audit log: every line whole, one per call; no worker wrote a ledger file.
    assert len(read_exchanges(tmp_path / "two" / "exchanges.jsonl")) == N_CASES * 2 * 2
    assert not (tmp_path / "two" / "ledger.json").exists()
    assert seen and seen[-1] == N_CASES * 2 and seen == sorted(seen)
    # Forked workers read their chunks from inherited memory: no task sent to them carries cases.
    assert 0 < max(sent_to_workers) < carried_besides_cases(skills, setup) + 1000

    rerun = Ledger()
    again = evaluate_parallel(cases, skills, setup, jobs=2, samples=2, ledger=rerun)
    assert [r.to_dict() for r in again.results] == [r.to_dict() for r in two.results]
    assert rerun.to_dict()["roles"]["executor"] == {**rerun.to_dict()["roles"]["executor"], "calls": 0,
                                                    "cached": N_CASES * 2 * 2}


def test_a_worker_failure_is_raised_as_in_process_with_its_spend_recorded(
    sim_workspace, cases, skills, tmp_path: Path
) -> None:
    config = sim_workspace.configured(budget={"max_tokens": 2000})
    ledger = Ledger()
    with pytest.raises(BudgetExceeded) as parallel:
        evaluate_parallel(cases, skills, WorkerSetup(sim_workspace.workspace, config, tmp_path / "two",
                                                     use_cache=False), jobs=2, ledger=ledger)
    with pytest.raises(BudgetExceeded) as in_proc:
        in_process(sim_workspace, config, cases, skills, tmp_path / "one", samples=1)
    assert str(parallel.value).startswith("token budget spent")
    assert str(in_proc.value).startswith("token budget spent")
    # The worker that failed had spent its half of the budget, and its calls count in the run's
    # ledger (the other worker, stopped then, may have finished a call or not).
    assert 1000 <= ledger.total_tokens and ledger.to_dict()["roles"]["executor"]["calls"] >= 1


def test_the_first_worker_to_fail_stops_the_others(sim_workspace, cases, skills, tmp_path: Path) -> None:
    # Worker 0's cases are padded (~12,000 tokens a call): it spends its half of the budget in
    # about 7 calls. Worker 1's 10 cases (20 calls, ~68,000 tokens) fit in its half, but take at
    # least 10 s at 0.5 s a call: it is stopped long before, since its results would be thrown away.
    # (At 0.25 s a call, a worker 0 that started a few seconds late on a loaded machine let worker
    # 1 make 14 to 16 calls first.)
    padded = [dataclasses.replace(c,
                                  task=dataclasses.replace(c.task,
                                                           input={**c.task.input,
                                                                  "text": c.task.input["text"] + " filler" * 5000}))
                                                                  for c in cases[:10]]
    config = sim_workspace.configured(budget={"max_tokens": 160_000}, llm={"concurrency": 1},
                                      simulator={"latency_s": 0.5})
    ledger = Ledger()
    with pytest.raises(BudgetExceeded, match="token budget spent"):
        evaluate_parallel([*padded, *cases[10:20]], skills,
                          WorkerSetup(sim_workspace.workspace, config, tmp_path / "run", use_cache=False), jobs=2,
                          ledger=ledger)
    calls = [e for e in read_exchanges(tmp_path / "run" / "exchanges.jsonl") if e.get("reply")]
    worker_1 = [e for e in calls if "filler" not in e["messages"][-1]["content"]]
    assert 1 <= len(worker_1) < 14, "worker 1 stopped well before its 20 calls"
    assert ledger.to_dict()["roles"]["executor"]["calls"] == len(calls)


def test_ctrl_c_stops_the_workers_and_keeps_their_spend_in_the_ledger(sim_workspace, cases, skills, tmp_path: Path,
                                                                      monkeypatch) -> None:
    # Ctrl-C reaches the terminal's whole process group: the workers and this process. Workers
    # once died of it mid-call, and the calls they had paid for never reached the ledger.
    monkeypatch.setattr(parallel, "PROGRESS_CHUNK", 2)
    config = sim_workspace.configured(llm={"concurrency": 1}, simulator={"latency_s": 0.1})
    ledger = Ledger()

    pressed: list[int] = []

    def ctrl_c(done: int, _total: int) -> None:
        if done and not pressed:  # once: a second Ctrl-C leaves without waiting for the workers
            pressed.append(done)
            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        evaluate_parallel(cases, skills,
                          WorkerSetup(sim_workspace.workspace, config, tmp_path / "run", use_cache=False), jobs=2,
                          ledger=ledger, progress=ctrl_c)
    calls = [e for e in read_exchanges(tmp_path / "run" / "exchanges.jsonl") if e.get("reply")]
    assert 1 <= len(calls) and not (tmp_path / "run" / "report.json").exists()
    assert ledger.to_dict()["roles"].get("executor", {}).get("calls") == len(calls)


def test_jobs_and_samples_must_be_positive(sim_workspace, cases, skills) -> None:
    with pytest.raises(ValueError, match="jobs"):
        evaluate_parallel(cases, skills, WorkerSetup(sim_workspace.workspace, sim_workspace.config), jobs=0)
    with pytest.raises(ValueError, match="samples"):
        evaluate_parallel([], skills, WorkerSetup(sim_workspace.workspace, sim_workspace.config), jobs=2, samples=0)


def test_a_spawned_worker_is_sent_its_cases_and_gives_the_same_report(sim_workspace, cases, skills, tmp_path: Path,
                                                                      sent_to_workers) -> None:
    # A thread alive in this process makes evaluate_parallel spawn its workers instead of forking.
    # One worker: a spawned process imports litellm anew (seconds of CPU).
    release = threading.Event()
    waiter = threading.Thread(target=release.wait)
    waiter.start()
    setup = WorkerSetup(sim_workspace.workspace, sim_workspace.config, tmp_path / "two", use_cache=False)
    try:
        spawned = evaluate_parallel(cases, skills, setup, jobs=1)
    finally:
        release.set()
        waiter.join()
    one, _ = in_process(sim_workspace, sim_workspace.config, cases, skills, tmp_path / "one", samples=1)
    assert spawned.to_json() == one.to_json()
    assert sum(sent_to_workers) > carried_besides_cases(skills, setup) - 1000 + sum(
        len(c) for c in pickled_chunks(cases)
    )


def test_filling_the_allocator_holes_leaves_no_free_block_in_used_pools(capfd) -> None:
    holes = [bytes(31) for _ in range(60_000)]  # 64-byte blocks
    del holes[::2]
    before = free_small_blocks()
    if not before:
        pytest.skip("not CPython's small-object allocator")
    assert before[64] >= 30_000
    ballast = fill_allocator_holes()
    after = free_small_blocks()
    # What stays free is at most one pool (16 KiB) per size: the pools the ballast and this test opened last.
    assert {size: n for size, n in after.items() if size >= 48 and n > 16384 // size} == {}
    assert len(ballast) >= 30_000
    # File descriptor 2 is stderr again.
    os.write(2, b"after the table\n")
    assert capfd.readouterr().err == "after the table\n"


def test_holes_are_left_unfilled_when_the_process_has_no_stderr() -> None:
    # `frames eval --jobs 2 2>&-` (cron, daemons): Python starts with sys.stderr None and fd 2 closed;
    # reading the allocator's table must not fail there, nor leave a file open on fd 2.
    script = (
        "import os, sys\n"
        "from frames_cli.evaluation.allocator import fill_allocator_holes\n"
        "ballast = fill_allocator_holes()\n"
        "try:\n"
        "    os.fstat(2)\n"
        "    left_open = True\n"
        "except OSError:\n"
        "    left_open = False\n"
        "print(sys.stderr is None, len(ballast), left_open)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], check=False, stdout=subprocess.PIPE, text=True,
                         preexec_fn=lambda: os.close(2))
    assert (run.returncode, run.stdout) == (0, "True 0 False\n")


def test_workers_make_their_calls_in_their_own_threads_when_llm_processes_is_set(
    sim_workspace, cases, skills, tmp_path: Path
) -> None:
    import multiprocessing.forkserver

    from frames_cli.llm.transport.callpool import start_context

    # A fork server started by this process (as an earlier CallPool would have, with its preload)
    # is not a child of a forked worker: a worker that used `llm.processes` would not reach it.
    start_context()
    multiprocessing.forkserver.ensure_running()
    config = sim_workspace.configured(llm={"processes": 2})
    two = evaluate_parallel(cases, skills, WorkerSetup(sim_workspace.workspace, config, tmp_path / "two"), jobs=2)
    one, _ = in_process(sim_workspace, sim_workspace.config, cases, skills, tmp_path / "one", samples=1)
    assert [r.to_dict() for r in two.results] == [r.to_dict() for r in one.results]
