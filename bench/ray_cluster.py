"""A Ray cluster of separate nodes on this machine, started with `ray start` as a user would (bench/eval_scale.py
--backend ray).

Each node is a `ray start --block` process of its own session: ended with SIGTERM, it stops the
processes it started, and nothing else on the machine (`ray stop` would end every Ray process of
the user, other programs' clusters too). Token authentication stays on (`RAY_AUTH_MODE=token`,
the token in ~/.ray/auth_token that Ray generates), so the driver sets the same mode.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

READY = "Ray runtime started."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    """`nodes` Ray nodes of `cpus` CPUs each on 127.0.0.1: a head, then workers joining it.

    `address` is what RAY_ADDRESS must hold; `env` the environment the driver needs (the address
    and the token mode). Use as a context manager; `stop()` ends every node it started.
    """

    def __init__(self, nodes: int = 2, cpus: int = 1, timeout_s: float = 120.0):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_ADDRESS": self.address}
        self.procs: list[subprocess.Popen] = []
        ray = str(Path(sys.executable).with_name("ray"))
        common = ["--block", "--num-cpus", str(cpus), "--disable-usage-stats"]
        self._start([ray, "start", "--head", "--port", str(self.port), "--include-dashboard=false", *common], timeout_s)
        for _ in range(nodes - 1):
            self._start([ray, "start", "--address", self.address, *common], timeout_s)

    def _start(self, argv: list[str], timeout_s: float) -> None:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env,
                                start_new_session=True)
        self.procs.append(proc)
        deadline = time.monotonic() + timeout_s
        assert proc.stdout is not None
        seen: list[str] = []
        for line in proc.stdout:
            seen.append(line)
            if READY in line:
                # Keep reading its output in the background, or a full pipe would block the node.
                threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
                return
            if time.monotonic() > deadline:
                break
        self.stop()
        raise RuntimeError(f"`{' '.join(argv)}` did not start:\n{''.join(seen[-20:])}")

    def stop(self) -> None:
        """SIGTERM to every node's `ray start --block` (which ends its own processes), workers first."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        self.procs = []

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def task_workers(self) -> list[int]:
        """Pids of the cluster's Ray worker processes now running a frames task (`ray::_run_task`)."""
        ours = set()
        for proc in self.procs:
            ours |= descendants(proc.pid)
        found = []
        for pid in ours:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"ray::_run_task"):
                found.append(pid)
        return sorted(found)


def descendants(root: int) -> set[int]:
    """Pids of the live descendants of `root`."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    out, todo = set(), [root]
    while todo:
        kids = children.get(todo.pop(), [])
        out.update(kids)
        todo += kids
    return out


def kill_a_worker(cluster: LocalCluster, after_s: float, done: threading.Event, killed: list[int]) -> threading.Thread:
    """A thread that, `after_s` seconds on, SIGKILLs one worker process running a task (the first
    it finds, looking every 0.1 s until `done`); its pid goes into `killed`."""

    def run() -> None:
        if done.wait(after_s):
            return
        while not done.is_set():
            pids = cluster.task_workers()
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
                return
            time.sleep(0.1)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
