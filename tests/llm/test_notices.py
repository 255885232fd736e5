"""A line within seconds when frames waits on something outside it (issue 31).

Invariants:
1. A provider error that is retried prints one line, before the backoff sleep, naming the model,
   the error and the seconds until the next try; concurrent calls failing alike make one line.
2. A spool request that waits prints, within 5 s of its request file appearing, one line on
   stderr with how many requests wait and in which folder, from a real `frames eval` process.
3. Notices repeat a key only after their interval.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from helpers.chat import executor_request

from frames_cli.llm.transport import notices
from frames_cli.llm.client.client import ModelClient
from frames_cli.llm.transport.notices import Notices


def test_a_retry_prints_its_line_before_the_backoff(sim_workspace, monkeypatch) -> None:
    lines: list[tuple[float, str]] = []
    monkeypatch.setattr(notices, "_stderr", lambda line: lines.append((time.monotonic(), line)))
    with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False) as warm:
        warm.chat(executor_request())  # litellm's import and one-time set-up are not the provider's wait
    config = sim_workspace.configured(faults={"rate_limit": 1.0},
                                      llm={"max_retries": 1, "backoff_base_s": 4.0, "backoff_max_s": 4.0})
    with ModelClient(sim_workspace.workspace, config, use_cache=False) as client:
        start = time.monotonic()
        replies = client.chat_many([executor_request(sample=i) for i in range(4)])
        end = time.monotonic()
    assert all(not r.ok for r in replies)
    (at, line), = lines
    assert at - start < 5.0, at - start
    assert end - at >= 1.9  # the backoff sleep (at least half of 4 s) came after the line
    assert (
        line.startswith("frames-sim/executor: RateLimitError") and "next try in " in line and "(retry 1 of 1;" in line
    )


def test_notices_repeat_a_key_only_after_the_interval() -> None:
    said: list[str] = []
    board = Notices(said.append, interval=30.0)
    assert board.say("k", "one", now=0.0) and not board.say("k", "two", now=29.0) and board.say("k", "three", now=30.0)
    assert board.say("other", "four", now=29.5)
    assert said == ["one", "three", "four"]


def test_a_spool_wait_prints_a_line_within_five_seconds(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "skills" / "bags").mkdir(parents=True)
    (root / "skills" / "bags" / "SKILL.md").write_text("---\nname: bags\ndescription: Free checked bags.\n---\nTwo "
                                                       "bags are free.\n")
    (root / "cases").mkdir()
    (root / "cases" / "c.yaml").write_text(
        "".join(
            f"- id: c{i}\n  category: bags\n  source: {{kind: manual, ref: t}}\n  created: '2026-12-01'\n"
            f"  task: {{input: {{text: 'How many bags {i}?'}}, expected: '2', check: {{kind: exact}}, "
            "answer_format: a number}\n"
            for i in range(3)
        )
    )
    (root / "frames.yaml").write_text("version: 1\nmodels:\n  executor: spool/desk\nspool:\n  timeout_s: 60\n  poll_s: "
                                      "0.2\nllm:\n  concurrency: 3\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    spool = root / ".frames" / "spool"
    proc = subprocess.Popen([sys.executable, "-m", "frames_cli", "eval", "--repo", str(root)], stderr=subprocess.PIPE,
                            text=True,
                            stdout=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})
    lines: queue.Queue[tuple[float, str]] = queue.Queue()
    threading.Thread(target=lambda: [lines.put((time.monotonic(), line)) for line in proc.stderr], daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while not list(spool.glob("*.request.json")):
            assert time.monotonic() < deadline and proc.poll() is None, "no spool request was written"
            time.sleep(0.05)
        first_request = time.monotonic()
        while True:
            at, line = lines.get(timeout=10)
            if line.startswith("spool: waiting for"):
                break
        assert at - first_request < 5.0
        assert f"in {spool} " in line and "answers" in line
    finally:
        proc.terminate()
        proc.wait(timeout=30)
