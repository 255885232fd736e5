"""`llm.processes`: litellm calls in CallPool worker processes, through litellm and frames-sim (no mocks).

Invariants:
1. A client with worker processes answers exactly as one without: same texts, parsed answers,
   usage and audit log.
2. A worker that dies is replaced, and the calls it was making are re-sent (spool calls wait
   again for the same answer file); one that keeps
   dying fails the calls with a final error naming the cause; a slow one is waited for. No
   call is lost or hangs, nothing is raised.
3. Closing the client ends its worker processes; Ctrl-C and SIGTERM sent to them do not.
4. An exception that is not a provider error crosses back as itself, or as a RuntimeError naming
   it when it cannot be unpickled.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers.chat import executor_request

from frames_cli.llm.store.audit import read_exchanges
from frames_cli.llm.transport.callpool import rebuilt_exception
from frames_cli.llm.client.client import ChatRequest, ModelClient

ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead too: it only waits for its parent (the fork server) to read its status.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().split(") ")[-1].split()[1])


def test_worker_processes_answer_as_threads_do(sim_workspace):
    requests = [executor_request(case_id=("bags-1", "cancel-1", "refund-1")[i % 3], sample=i) for i in range(40)]
    outcomes = {}
    for processes in (0, 2):
        # A generous timeout: on a loaded machine (CI, parallel tests) the workers' start-up can take
        # tens of seconds, and a timed-out call is retried, which this comparison would count.
        config = sim_workspace.configured(faults={"malformed_json": 0.3},
                                          llm={"concurrency": 6, "processes": processes, "timeout_s": 600.0})
        run_dir = sim_workspace.run_dir / f"p{processes}"
        with ModelClient(sim_workspace.workspace, config, run_dir=run_dir, use_cache=False) as client:
            replies = client.chat_many(requests)
            parents = [parent_of(pid) for pid in client._processes.pids] if client._processes else []
        exchanges = read_exchanges(run_dir / "exchanges.jsonl")
        assert [e["error"] for e in exchanges if "error" in e] == [], f"processes={processes}: calls failed"
        log = sorted((e["tag"], e["sample"], e["attempt"], e["reply"], e["usage"]["prompt_tokens"]) for e in exchanges)
        outcomes[processes] = ([(r.text, r.data, r.usage, r.repaired, r.attempts) for r in replies], log, parents)
    assert outcomes[0][0] == outcomes[2][0] and outcomes[0][1] == outcomes[2][1]
    assert any(repaired for _, _, _, repaired, _ in outcomes[2][0]), "the repair turn ran through the workers too"
    # Two workers, forked by the fork server rather than by this process (which runs threads).
    assert outcomes[0][2] == [] and len(outcomes[2][2]) == 2 and os.getpid() not in outcomes[2][2]


def test_a_dead_worker_is_replaced_and_its_calls_retried(sim_workspace):
    config = sim_workspace.configured(llm={"concurrency": 8, "processes": 2, "timeout_s": 5.0, "backoff_base_s": 0.001})
    requests = [executor_request(sample=i) for i in range(60)]
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir, use_cache=False) as client:
        assert client.chat(executor_request(sample=-1)).ok
        victim = client._processes.pids[0]
        os.kill(victim, signal.SIGKILL)
        replies = client.chat_many(requests)
        pids = client._processes.pids
    assert all(r.ok for r in replies) and [r.request for r in replies] == requests
    assert victim not in pids and len(pids) == 2
    lost = [e for e in read_exchanges(sim_workspace.run_dir / "exchanges.jsonl") if e.get("error")]
    assert lost and all(e["error"].startswith("CallPoolError: worker process 0 ended") for e in lost)
    assert sum(r.attempts for r in replies) == 60 + len(lost), "each lost call was retried once"


def test_a_spool_call_whose_worker_dies_waits_again_for_the_same_answer_file(sim_workspace):
    # Spool calls are never retried on a timeout, but one lost with its worker is not a person's
    # silence: it is re-sent, and the new worker waits for the answer to the same request file.
    config = sim_workspace.configured(
        models={"judge": "spool/person"}, spool={"timeout_s": 20.0, "poll_s": 0.01},
        llm={"concurrency": 1, "processes": 1}
    )
    folder = sim_workspace.workspace.root / config.spool.dir
    with ModelClient(sim_workspace.workspace, config, run_dir=sim_workspace.run_dir, use_cache=False) as client:
        result = {}
        waiting = threading.Thread(
            target=lambda: result.update(
                reply=client.chat(ChatRequest("judge", [{"role": "user", "content": "Grade it."}]))
            )
        )
        waiting.start()
        # The first call starts the fork server, which imports litellm: seconds, more when loaded.
        deadline = time.monotonic() + 120
        while not list(folder.glob("*.request.json")) and time.monotonic() < deadline:
            time.sleep(0.01)
        (request,) = folder.glob("*.request.json")
        victim = client._processes.pids[0]
        os.kill(victim, signal.SIGKILL)
        while client._processes.pids == [victim] and time.monotonic() < deadline:
            time.sleep(0.01)
        (folder / json.loads(request.read_text())["answer_file"]).write_text("PASS")
        waiting.join(timeout=20)
    assert not waiting.is_alive()
    reply = result["reply"]
    assert reply.ok and reply.text == "PASS" and reply.attempts == 2
    assert list(folder.glob("*.request.json")) == [request]
    lost, answered = read_exchanges(sim_workspace.run_dir / "exchanges.jsonl")
    assert lost["error"].startswith("CallPoolError: worker process 0 ended during the call")
    assert lost["attempt"] == answered["attempt"] == 0 and answered["reply"] == "PASS"


def test_a_slow_but_live_worker_is_waited_for_not_replaced(sim_workspace):
    # As a thread would be: litellm's timeout bounds each HTTP read, not a whole call, so a
    # provider that keeps sending may take longer than llm.timeout_s, and its worker lives on.
    config = sim_workspace.configured(llm={"concurrency": 4, "processes": 2, "timeout_s": 0.5})
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        assert client.chat(executor_request(sample=-1)).ok
        pids = client._processes.pids
        os.kill(pids[1], signal.SIGSTOP)
        threading.Timer(1.5, os.kill, (pids[1], signal.SIGCONT)).start()
        replies = client.chat_many([executor_request(sample=i) for i in range(12)])
        assert client._processes.pids == pids
    assert all(r.ok and r.attempts == 1 for r in replies)


def test_workers_that_keep_dying_fail_the_calls_without_losing_or_hanging_any(sim_workspace):
    from frames_cli.llm.transport.callpool import MAX_RESTARTS

    config = sim_workspace.configured(llm={"concurrency": 4, "processes": 2, "timeout_s": 5.0, "backoff_base_s": 0.001,
                                           "max_retries": 1})
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        assert client.chat(executor_request(sample=-1)).ok
        replies = []
        # Two workers killed per round, each replaced while replacements last.
        for round_ in range(MAX_RESTARTS // 2 + 1):
            for pid in client._processes.pids:
                os.kill(pid, signal.SIGKILL)
            start = time.monotonic()
            replies += client.chat_many([executor_request(sample=10 * round_ + i) for i in range(8)])
            assert time.monotonic() - start < 30
        later = client.chat(executor_request(sample=999))
    failed = [r for r in replies if not r.ok]
    assert failed and all("CallPoolError" in r.error for r in failed)
    assert not later.ok and f"{MAX_RESTARTS} workers replaced already, no more" in later.error and later.attempts == 1


def test_workers_outlive_ctrl_c_and_sigterm_sent_to_the_process_group(sim_workspace):
    # `frames evolve` finishes its current step after Ctrl-C or SIGTERM; the step's calls must
    # still be answered, so the signals a whole process group receives leave the workers be.
    config = sim_workspace.configured(llm={"concurrency": 4, "processes": 2})
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        assert client.chat(executor_request()).ok
        for pid in client._processes.pids:
            os.kill(pid, signal.SIGINT)
            os.kill(pid, signal.SIGTERM)
        replies = client.chat_many([executor_request(sample=i) for i in range(1, 9)])
        pids = client._processes.pids
    assert all(r.ok for r in replies)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in pids), "closing still ends them"


def test_closing_the_client_ends_its_worker_processes(sim_workspace):
    config = sim_workspace.configured(llm={"concurrency": 4, "processes": 2})
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        assert client.chat(executor_request()).ok
        pids = client._processes.pids
        assert all(alive(pid) for pid in pids)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in pids)


class NeedsTwoArguments(Exception):
    def __init__(self, what: str, where: str):
        super().__init__(f"{what} at {where}")


def test_a_worker_exception_crosses_back_as_itself_or_named():
    again = rebuilt_exception("KeyError", "'x'", pickle.dumps(KeyError("x")))
    assert isinstance(again, KeyError) and again.args == ("x",)
    broken = rebuilt_exception("NeedsTwoArguments", "a at b", pickle.dumps(NeedsTwoArguments("a", "b")))
    assert isinstance(broken, RuntimeError) and str(broken) == "NeedsTwoArguments in a model worker process: a at b"
    assert str(rebuilt_exception("Lockish", "held", None)) == "Lockish in a model worker process: held"


def test_without_a_fork_server_workers_are_spawned(sim_workspace, monkeypatch):
    import multiprocessing

    # As on Windows; a spawned worker imports litellm itself (seconds), hence one worker only.
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    config = sim_workspace.configured(llm={"concurrency": 2, "processes": 1})
    requests = [executor_request(sample=i) for i in range(4)]
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        spawned = client.chat_many(requests)
        # A spawned worker is this process's child; a fork server's worker is the server's.
        assert [parent_of(pid) for pid in client._processes.pids] == [os.getpid()]
    with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False) as client:
        threaded = client.chat_many(requests)
    assert all(r.ok for r in spawned) and [r.data for r in spawned] == [r.data for r in threaded]


def test_a_closed_client_starts_no_pool_and_a_waiting_chat_many_returns(sim_workspace):
    config = sim_workspace.configured(simulator={"latency_s": 0.2}, llm={"concurrency": 2, "processes": 2})
    client = ModelClient(sim_workspace.workspace, config, use_cache=False)
    assert client.chat(executor_request(sample=-1)).ok
    replies: list = []
    waiting = threading.Thread(
        target=lambda: replies.extend(client.chat_many([executor_request(sample=i) for i in range(20)]))
    )
    waiting.start()
    time.sleep(0.3)  # two calls in flight, the rest queued
    client.close()
    waiting.join(timeout=20)
    assert not waiting.is_alive(), "chat_many must return once the client is closed"
    assert len(replies) == 20 and any(not r.ok and "closed" in r.error for r in replies)
    after = client.chat(executor_request(sample=99))
    assert not after.ok and "closed" in after.error and client._processes.pids == []


def test_a_client_never_closed_lets_the_program_exit_and_workers_ignore_the_current_directory(sim_workspace, tmp_path):
    # The program runs in a folder holding a module named like one of litellm's dependencies;
    # the fork server starts there too, and must not import it.
    (tmp_path / "httpx.py").write_text("raise RuntimeError('the workspace shadowed httpx')\n")
    script = f"""
from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.workspace.layout import Workspace
from helpers.chat import executor_request
import pickle
config = pickle.loads({pickle.dumps(sim_workspace.configured(llm={"processes": 2}))!r})
client = ModelClient(Workspace.open({str(sim_workspace.workspace.root)!r}), config, use_cache=False)
print(client.chat(executor_request()).ok)
"""
    paths = [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    # A program kept alive by its workers never exits: the timeout fails the test. It is generous
    # because the program imports litellm (3 s alone; over 30 s seen on a loaded 2-core machine).
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0 and done.stdout.strip() == "True" and "shadowed" not in done.stderr, done.stderr


def test_too_many_calls_in_flight_per_worker_is_a_config_error(sim_workspace):
    from frames_cli.errors import ConfigError
    from frames_cli.workspace.config import MAX_CALLS_PER_PROCESS
    from frames_cli.workspace.config_file import parse_config

    too_many = 2 * MAX_CALLS_PER_PROCESS + 1
    with pytest.raises(ConfigError, match="needs `llm.processes` of at least 3") as raised:
        parse_config(f"version: 1\nllm:\n  concurrency: {too_many}\n  processes: 2\n")
    assert str(raised.value.location) == "frames.yaml:3"
    assert parse_config(f"version: 1\nllm:\n  concurrency: {too_many}\n").llm.processes == 0, (
        "threads have no such limit"
    )
    # A config built in code meets the same check when the pool starts, before any worker does.
    config = sim_workspace.configured(llm={"concurrency": too_many, "processes": 2})
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        with pytest.raises(ConfigError, match="at least 3"):
            client.chat(executor_request())
        assert client._processes is None
