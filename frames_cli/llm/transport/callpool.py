"""CallPool: worker processes that make a ModelClient's litellm calls (`llm.processes`), past one GIL."""

from __future__ import annotations

import atexit
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.llm.transport import providers
from frames_cli.llm.transport.calls import CallOutcome, invoke
from frames_cli.workspace.config import LLMConfig
from frames_cli.workspace.config_file import check_calls_per_process

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkServerContext, SpawnContext
    from multiprocessing.process import BaseProcess
    from frames_cli.workspace.config import SimulatorConfig, SpoolConfig

#: Seconds a closing pool waits, in all, for its workers to end before it kills them.
CLOSE_WAIT_S = 5.0
#: Workers started in place of ones that died (or that an interrupted call put out of step), per
#: pool; beyond that the pool is broken (a worker that keeps dying is a defect to report).
MAX_RESTARTS = 3


@dataclass(frozen=True)
class _Channel:
    """One pipe to a worker thread; `generation` tells a pipe to a replaced worker from a live one."""

    conn: Connection
    worker: int
    generation: int


class CallPool:
    """`processes` worker processes that make litellm calls for one ModelClient's threads.

    litellm spends about 0.85 ms of CPU per call under the GIL (measured with the simulator,
    docs/decisions/0019-llm-processes-opt-in.md), so one process tops out near a thousand calls a second on one CPU, and
    well before that the threads queue for the GIL. A pool moves the `litellm.completion` calls
    into other processes, which run on other CPUs; everything else a request does (cache,
    budget, ledger, audit log, schema validation, repair turns) stays in the client's process.

    Workers are forked from multiprocessing's fork server with litellm set up there once
    (`forkserver_preload`), so a worker starts in a fraction of a second and shares the import's
    memory; forking the client's own process instead could copy a lock that one of its threads
    holds. Where there is no fork server (Windows), workers are spawned and each imports litellm.
    `channels` pipes are spread over the workers, each served by one worker thread; a call
    borrows a free pipe, sends the call's keyword arguments and blocks on the reply (one hand-off
    each way, no dispatcher). Each worker registers the client's provider context under the
    client's key, with the simulator's world sent along, so `frames-sim` and `spool` models
    answer as they do in-process.

    Lifetime: a worker ignores SIGINT and SIGTERM (the client decides when to stop; see `_serve`)
    and ends as soon as the client closes the pool or dies, even in the middle of a call (it
    watches a pipe of its own that the client never writes to). A pool that is not closed is
    closed when the interpreter exits.

    Failure: a worker that ends is replaced; the calls it was making come back as retriable
    errors, which the client retries like a dropped connection. After `MAX_RESTARTS`
    replacements, or once the pool is closed, calls get a final error. A worker that lives is
    waited for as a thread would be: litellm's `timeout=` bounds each call (for HTTP providers it
    bounds each read, so a provider that keeps sending may take longer), and a deadline of our
    own would kill workers whose provider is slow but alive.

    Like any fork-server or spawn start, a worker imports the program's `__main__` module again
    (as `__mp_main__`), so a script that uses a pool keeps its own work under
    `if __name__ == "__main__":`; without it, the worker stops with multiprocessing's own
    explanation on stderr, and the client's calls fail. A program read from standard input
    (`python - < script.py`) cannot be imported again at all, so it cannot use a pool.

    A fork server that something else in the process started earlier keeps its own preload:
    workers then import litellm themselves (seconds each) but work the same.
    """

    def __init__(
        self, processes: int, channels: int, context_key: str, root: Path, simulator: SimulatorConfig,
        spool: SpoolConfig, world: Any,
    ):
        """Start the workers (returns once they are started, not once litellm is ready in them).

        Args:
            processes: worker processes (≥ 1; at most `channels` are started).
            channels: pipes, hence calls in flight at once (≥ 1); the client's `llm.concurrency`.
            context_key / root / simulator / spool / world: the client's provider context.

        Raises:
            ConfigError: more than MAX_CALLS_PER_PROCESS channels per process (`check_calls_per_process`).
            ValueError: `processes` or `channels` below 1.
        """
        if processes < 1 or channels < 1:
            raise ValueError("a CallPool needs at least one process and one channel")
        # frames.yaml is checked when it is read; a config built in code is checked here.
        check_calls_per_process(LLMConfig(concurrency=channels, processes=processes), None)
        processes = min(processes, channels)
        self._args = (context_key, root, simulator, spool, world)
        self._context = start_context()
        self._sizes = [len(range(k, channels, processes)) for k in range(processes)]
        # None: the token `_break` puts in it to wake waiting callers.
        self._free: queue.SimpleQueue[_Channel | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._failure: str | None = None
        self._restarts = 0
        self._workers: list[tuple[BaseProcess, Connection, list[Connection]]] = []
        self._generations = [0] * processes
        for k in range(processes):
            self._workers.append(self._start(k))
        atexit.register(self.close)

    @property
    def pids(self) -> list[int]:
        """Process ids of the current workers (for tests and benchmarks)."""
        return [p.pid for p, _, _ in self._workers if p.pid is not None]

    def call(self, kwargs: dict[str, Any]) -> CallOutcome:
        """`invoke(kwargs)` in a worker process; blocks until a pipe is free and the reply is in.

        Args:
            kwargs: keyword arguments of `litellm.completion` (picklable: plain data only).

        Returns:
            the worker's outcome; a `CallPoolError` outcome marked `lost` when the worker ended
            during the call (it is replaced), a final one when the pool is closed or broken.

        Raises:
            Exception: what `invoke` raised in the worker (a defect, not a provider error); when it
                cannot cross the process boundary as itself, a RuntimeError with its type and text.
        """
        channel = self._take_channel()
        if isinstance(channel, CallOutcome):
            return channel
        try:
            channel.conn.send(kwargs)
        except BaseException as exc:
            if self._failure is not None:  # closed meanwhile: the pipe was shut under this call
                return CallOutcome(error=f"CallPoolError: {self._failure}")
            if isinstance(exc, (EOFError, OSError)):
                return self._replace(
                    channel, f"worker process {channel.worker} ended before the call ({type(exc).__name__})"
                )
            self._free.put(channel)  # `send` pickles before it writes: nothing reached the pipe
            raise
        try:
            kind, payload = channel.conn.recv()
        except BaseException as exc:
            if self._failure is not None:
                return CallOutcome(error=f"CallPoolError: {self._failure}")
            if isinstance(exc, (EOFError, OSError)):
                return self._replace(
                    channel, f"worker process {channel.worker} ended during the call ({type(exc).__name__})"
                )
            # A reply may still come on this pipe, so it is out of step with its worker for good.
            self._replace(channel, f"the call on worker process {channel.worker} was interrupted")
            raise
        self._free.put(channel)
        if kind == "ok":
            return payload
        raise rebuilt_exception(*payload)

    def _take_channel(self) -> _Channel | CallOutcome:
        """A free pipe to a live worker (blocks until there is one), or the final outcome of a pool that
        is closed or broken."""
        while True:
            channel = self._free.get()
            if channel is None or self._failure is not None:
                self._free.put(channel)  # the next caller waiting for a pipe wakes up too
                return CallOutcome(error=f"CallPoolError: {self._failure}")
            if channel.generation == self._generations[channel.worker]:
                return channel
            channel.conn.close()  # a pipe to a worker that has been replaced

    def close(self) -> None:
        """End the workers (idempotent): calls in flight and later ones get a final error.

        Closing the pipes ends each worker at once, even in the middle of a call (a spool wait
        included); a worker still alive after CLOSE_WAIT_S in all is killed.
        """
        with self._lock:
            self._break("the model client was closed")
            workers, self._workers = self._workers, []
        atexit.unregister(self.close)
        for _, alive, pipes in workers:
            alive.close()
            for conn in pipes:
                conn.close()
        deadline = time.monotonic() + CLOSE_WAIT_S
        for process, _, _ in workers:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()  # it ignores SIGTERM
                process.join()

    def _start(self, k: int) -> tuple[BaseProcess, Connection, list[Connection]]:
        """Start worker `k` of the current generation with fresh pipes, and put its pipes in the free queue."""
        ends = [self._context.Pipe() for _ in range(self._sizes[k])]
        alive_theirs, alive_mine = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=_serve, args=([t for _, t in ends], alive_theirs, *self._args), name=f"frames-llm-{k}", daemon=True
        )
        process.start()
        # The worker holds these now; ours would keep a dead worker's pipes from reporting EOF.
        alive_theirs.close()
        for _, theirs in ends:
            theirs.close()
        for mine, _ in ends:
            self._free.put(_Channel(mine, k, self._generations[k]))
        return process, alive_mine, [mine for mine, _ in ends]

    def _replace(self, channel: _Channel, reason: str) -> CallOutcome:
        """After `channel` failed: replace its worker (once per generation), or break the pool."""
        channel.conn.close()
        with self._lock:
            if self._failure is not None:
                return CallOutcome(error=f"CallPoolError: {self._failure}")
            k = channel.worker
            if channel.generation == self._generations[k]:
                if self._restarts >= MAX_RESTARTS:
                    self._break(f"{reason}; {MAX_RESTARTS} workers replaced already, no more")
                    return CallOutcome(error=f"CallPoolError: {self._failure}")
                self._restarts += 1
                old, alive, _ = self._workers[k]
                old.join(1.0)  # a worker that ended has its exit code reported by now
                if old.is_alive():
                    old.kill()  # out of step after an interrupted call: its other calls are retried
                else:
                    reason += f"; exit code {old.exitcode}, its own error message, if any, is on stderr"
                alive.close()
                self._generations[k] += 1
                self._workers[k] = self._start(k)
        return CallOutcome(error=f"CallPoolError: {reason}", retriable=True, lost=True)


    def _break(self, reason: str) -> None:
        """Fail every later call with `reason` (the first reason stays); caller holds `_lock`."""
        if self._failure is None:
            self._failure = reason
            # Callers waiting for a pipe take this one, see the failure, put it back and return.
            self._free.put(None)


def start_context() -> ForkServerContext | SpawnContext:
    """The fork-server context, set to preload litellm; spawn where there is no fork server."""
    providers.set_litellm_environment()  # the fork server inherits this process's environment
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(
            ["frames_cli.llm.transport.forkserver_preload", "frames_cli.llm.transport.callpool"]
        )
        return context
    return multiprocessing.get_context("spawn")  # Windows: each worker imports litellm itself (seconds)


def rebuilt_exception(type_name: str, text: str, pickled: bytes | None) -> BaseException:
    """The exception a worker sent, or a RuntimeError saying what it was when it does not unpickle."""
    if pickled is not None:
        try:
            return pickle.loads(pickled)
        except Exception:  # noqa: BLE001 - an exception type whose __init__ needs other arguments
            pass
    return RuntimeError(f"{type_name} in a model worker process: {text}")


def _serve(
    channels: list[Connection], alive: Connection, context_key: str, root: Path, simulator: SimulatorConfig,
    spool: SpoolConfig, world: Any,
) -> None:
    """Worker process body: one thread per pipe answering calls; ends when `alive` reports EOF.

    Ctrl-C and SIGTERM reach a terminal's or a service's whole process group, workers included.
    Workers ignore both: the client decides when to stop (`frames evolve` finishes its current
    step first, and that step's calls must still be answered). The client never writes to
    `alive`; reading it returns when the client closes it or dies, and the worker then ends at
    once, whatever its threads are doing.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    providers.litellm_module()
    context = providers.ProviderContext(root, simulator, spool, lambda: world)
    providers.register(context, key=context_key)
    for channel in channels:
        threading.Thread(target=_answer_calls, args=(channel,), daemon=True).start()
    try:
        alive.recv()
    except (EOFError, OSError):
        pass
    os._exit(0)  # nothing to flush: a worker writes no files of its own


def _answer_calls(channel: Connection) -> None:
    while True:
        try:
            kwargs = channel.recv()
        except (EOFError, OSError):
            return  # the client closed this pipe
        try:
            reply: tuple[str, Any] = ("ok", invoke(kwargs))
        except Exception as exc:  # noqa: BLE001 - sent back and raised in the client
            try:
                pickled: bytes | None = pickle.dumps(exc)
            except Exception:  # noqa: BLE001 - e.g. an exception holding a lock
                pickled = None
            reply = ("raise", (type(exc).__name__, str(exc), pickled))
        try:
            channel.send(reply)
        except (EOFError, OSError):
            return
