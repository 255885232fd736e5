"""CallPool: worker processes that make a ModelClient's litellm calls (`llm.processes`), past one GIL."""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.llm import providers
from frames_cli.llm.calls import CallOutcome, invoke

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from frames_cli.sim.world import SimWorld
    from frames_cli.workspace.config import SimulatorConfig, SpoolConfig

#: Seconds the client waits beyond a call's own timeout (which litellm enforces inside the
#: worker) before it takes the worker for stuck.
REPLY_GRACE_S = 30.0
#: Seconds a closing pool gives its workers to finish the calls they are in before ending them.
CLOSE_WAIT_S = 5.0


class CallPool:
    """`processes` worker processes that make litellm calls for one ModelClient's threads.

    litellm spends about 0.85 ms of CPU per call under the GIL (measured with the simulator,
    docs/DECISIONS.md), so one process tops out near a thousand calls a second on one CPU, and
    well before that the threads queue for the GIL. A pool moves the `litellm.completion` calls
    into other processes, which run on other CPUs; everything else a request does (cache,
    budget, ledger, audit log, schema validation, repair turns) stays in the client's process.

    Workers are forked from multiprocessing's fork server with litellm imported there once, so
    a worker starts in a fraction of a second and shares the import's memory; forking the client's
    own process instead could copy a lock that one of its threads holds. Where there is no fork
    server (Windows), workers are spawned and each imports litellm. `channels` pipes are
    spread over the workers, each served by one worker thread; a call borrows a free pipe, sends
    the call's keyword arguments and blocks on the reply (one hand-off each way, no dispatcher).
    Each worker registers the client's provider context under the client's key, with the
    simulator's world sent along, so `frames-sim` and `spool` models answer as they do in-process.

    Failure: a worker that ends, or gives no reply within the call's timeout plus
    `REPLY_GRACE_S`, breaks the pool; that call and every later one get a final (not retried)
    error outcome naming the cause, so requests end as failed replies and none hangs.

    Like any forkserver or spawn start, a worker imports the program's `__main__` module again
    (as `__mp_main__`), so a script that uses a pool keeps its own work under
    `if __name__ == "__main__":`.
    """

    def __init__(self, processes: int, channels: int, context_key: str, root: Path, simulator: SimulatorConfig, spool: SpoolConfig, world: SimWorld | None):
        """Start the workers (returns once they are started, not once litellm is ready in them).

        Args:
            processes: worker processes (≥ 1).
            channels: pipes, hence calls in flight at once (≥ 1); the client's `llm.concurrency`.
            context_key / root / simulator / spool / world: the client's provider context.
        """
        if processes < 1 or channels < 1:
            raise ValueError("a CallPool needs at least one process and one channel")
        providers.set_litellm_environment()  # the fork server inherits this process's environment
        if "forkserver" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["frames_cli.llm.forkserver_preload", "frames_cli.llm.callpool"])
        else:  # Windows: each worker is a new interpreter and imports litellm itself (seconds)
            context = multiprocessing.get_context("spawn")
        ends = [context.Pipe() for _ in range(channels)]
        self._free: queue.SimpleQueue[Connection] = queue.SimpleQueue()
        for mine, _ in ends:
            self._free.put(mine)
        self._failure: str | None = None
        self._lock = threading.Lock()
        self._processes = []
        for k in range(min(processes, channels)):
            theirs = [ends[i][1] for i in range(k, channels, processes)]
            process = context.Process(target=_serve, args=(theirs, context_key, root, simulator, spool, world), name=f"frames-llm-{k}", daemon=True)
            process.start()
            self._processes.append(process)
        for _, theirs in ends:
            theirs.close()  # the workers hold them now; ours would keep a dead worker's pipes open
        self._connections = [mine for mine, _ in ends]

    @property
    def pids(self) -> list[int]:
        """Process ids of the workers (for benchmarks that read their memory)."""
        return [p.pid for p in self._processes if p.pid is not None]

    def call(self, kwargs: dict[str, Any], timeout_s: float) -> CallOutcome:
        """`invoke(kwargs)` in a worker process; blocks until a pipe is free and the reply is in.

        Args:
            kwargs: keyword arguments of `litellm.completion` (picklable: plain data only).
            timeout_s: the call's own timeout (seconds), which litellm enforces in the worker.

        Raises:
            Exception: what `invoke` raised in the worker (a defect, not a provider error); when it
                cannot cross the process boundary as itself, a RuntimeError with its type and text.
        """
        channel = self._free.get()
        try:
            if self._failure is None:
                try:
                    channel.send(kwargs)
                    if channel.poll(timeout_s + REPLY_GRACE_S):
                        kind, payload = channel.recv()
                        if kind == "ok":
                            return payload
                        raise _rebuilt(*payload)
                    self._break(f"no reply from a worker process within {timeout_s + REPLY_GRACE_S:.0f} s")
                except (EOFError, OSError) as exc:
                    self._break(f"a worker process ended ({type(exc).__name__}; exit codes {[p.exitcode for p in self._processes]})")
            return CallOutcome(error=f"CallPoolError: {self._failure}")
        finally:
            # A broken pool's pipes go back too, so every caller waiting for one wakes up and
            # gets the error instead of waiting for ever.
            self._free.put(channel)

    def close(self) -> None:
        """Close the pipes (workers finish their current call and end); kill workers still alive after CLOSE_WAIT_S."""
        for channel in self._connections:
            channel.close()
        for process in self._processes:
            process.join(CLOSE_WAIT_S)
            if process.is_alive():
                process.kill()  # it ignores SIGTERM
                process.join()

    def _break(self, reason: str) -> None:
        with self._lock:
            if self._failure is None:
                self._failure = reason


def _rebuilt(type_name: str, text: str, pickled: bytes | None) -> BaseException:
    """The exception a worker sent, or a RuntimeError saying what it was when it does not unpickle."""
    if pickled is not None:
        try:
            return pickle.loads(pickled)
        except Exception:  # noqa: BLE001 - an exception type whose __init__ needs other arguments
            pass
    return RuntimeError(f"{type_name} in a model worker process: {text}")


def _serve(channels: list[Connection], context_key: str, root: Path, simulator: SimulatorConfig, spool: SpoolConfig, world: SimWorld | None) -> None:
    """Worker process body: one thread per pipe, each answering calls until its pipe closes.

    Ctrl-C and SIGTERM reach a terminal's or a service's whole process group, workers included.
    Workers ignore both: the client decides when to stop (`frames evolve` finishes its current
    step first, and that step's calls must still be answered), and a worker ends when its pipes
    close, which also happens when the client dies.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    providers.litellm_module()
    context = providers.ProviderContext(root, simulator, spool, lambda: world)
    providers.register(context, key=context_key)
    threads = [threading.Thread(target=_answer_calls, args=(channel,), daemon=True) for channel in channels]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _answer_calls(channel: Connection) -> None:
    while True:
        try:
            kwargs = channel.recv()
        except (EOFError, OSError):
            return  # the client closed the pool (or ended)
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
