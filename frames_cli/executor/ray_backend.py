"""`eval.backend: ray`: the command agent's runs as Ray tasks, on as many machines as the Ray cluster has.

Ray is an optional extra (`pip install 'frames-cli[ray]'`) and is imported only here, when an
evaluation starts. `ray.init()` is called as Ray users expect: with `RAY_ADDRESS` set it joins
that cluster; otherwise the cluster `ray start` last started on this machine; otherwise it starts
a local one (no address, no daemon left behind).
"""

from __future__ import annotations

import math
import os
import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.executor.base import AgentResult
from frames_cli.executor.command import CommandExecutor

if TYPE_CHECKING:
    from frames_cli.formats.case import AgentCase
    from frames_cli.formats.skill_set import SkillSet

#: Times Ray runs a task again after its worker process or node died (Ray's own `max_retries`);
#: a task still without a result after that hands back its cases as lost (the evaluation runs
#: them again, `eval.lost_retries`).
TASK_RETRIES = 3
#: Tasks per CPU slot of the cluster in one `run` call: several, so a slow task does not hold up
#: the rest (each slot takes a next task when it finishes one), few, so a task's fixed cost
#: (about a millisecond of scheduling) is spread over several cases when there are many.
TASKS_PER_SLOT = 4

_init_lock = threading.Lock()
_task: Any = None


def ray_module(config_path: Path | None = None) -> Any:
    """Ray, imported and connected (`ray.init()` once per process, see the module docstring).

    Raises:
        ConfigError: Ray is not installed (exit code 2; the message names `config_path` and says
            how to install it).
    """
    try:
        import ray
    except ImportError:
        from frames_cli.errors import ConfigError, Location

        where = Location(config_path) if config_path else None
        raise ConfigError(
            "`eval.backend: ray` needs Ray: pip install 'frames-cli[ray]' (or set eval.backend: local)", where
        ) from None
    with _init_lock:
        if not ray.is_initialized():
            import logging

            ray.init(
                include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False, configure_logging=False
            )
    return ray


class RayCommandExecutor:
    """The command agent (executor/command.py), each run in a Ray task on the cluster's workers.

    A `run` ships the skill set once (`ray.put` of its files; each worker writes them to a fresh
    folder, as the local agent gets them) and cuts the cases into tasks: one case per task when
    the cluster has a CPU slot for each, else up to `TASKS_PER_SLOT` tasks per slot. A task runs
    its cases one after another with the local `CommandExecutor`, so results, usage and failures
    are exactly a local run's, in case order. A task reserves `cpus` CPUs (`eval.ray_cpus`;
    fractions put several agents on one CPU).

    A worker (or node) that dies loses only its tasks: Ray runs them again, up to TASK_RETRIES
    times; after that their cases come back as lost (`AgentResult.lost`), which the evaluation
    runs again and otherwise leaves out of the scores. The agent runs in `cwd` (the workspace
    folder): on another machine that path and the program must exist there too; a case on a node
    without it fails with the node's name.

    Args:
        argv / timeout_s / cwd: as `CommandExecutor`'s.
        cpus: CPUs each task reserves on the cluster (> 0).
    """

    def __init__(self, argv: Sequence[str], timeout_s: float, cwd: Path | None, cpus: float = 1.0):
        if not argv:
            raise ValueError("the command executor needs a command (executor.command in frames.yaml)")
        self.argv, self.timeout_s, self.cwd, self.cpus = list(argv), timeout_s, cwd, cpus

    def run(self, cases: Sequence[AgentCase], skills: SkillSet, sample: int = 0, retry: int = 0) -> list[AgentResult]:
        """Run the agent on every case as Ray tasks; results in case order. See `executor.base.Executor`."""
        if not cases:
            return []
        ray = ray_module()
        task = _remote(ray).options(num_cpus=self.cpus, max_retries=TASK_RETRIES, retry_exceptions=False)
        files = ray.put(skills.to_files())
        size = self.chunk_size(len(cases), ray.cluster_resources().get("CPU", 1.0))
        chunks = [list(cases[i:i + size]) for i in range(0, len(cases), size)]
        refs = [
            task.remote(self.argv, self.timeout_s, str(self.cwd) if self.cwd else None, files, chunk, sample, retry)
            for chunk in chunks
        ]
        out: list[AgentResult] = []
        for chunk, ref in zip(chunks, refs):
            try:
                out += ray.get(ref)
            except ray.exceptions.RayTaskError:
                raise  # our task code raised: a defect (or frames missing on a node), not a lost worker
            except ray.exceptions.RayError as exc:
                # Ray gave up on the task (its workers kept dying, or the node left): its cases are
                # lost, not failed; the evaluation asks again.
                reason = (
                    f"Ray task lost after {TASK_RETRIES} retries: {type(exc).__name__}: "
                    f"{str(exc).splitlines()[0] if str(exc) else ''}"
                )
                out += [AgentResult(c.id, error=reason, lost=True) for c in chunk]
        return out

    def chunk_size(self, n: int, cluster_cpus: float) -> int:
        """Cases per task: 1 while the cases fit the cluster's slots (`cluster_cpus / cpus`), else
        enough that each slot gets about `TASKS_PER_SLOT` tasks."""
        slots = max(1, int(cluster_cpus / self.cpus))
        return max(1, math.ceil(n / (slots * TASKS_PER_SLOT)))


def _remote(ray: Any) -> Any:
    """`_run_task` as a Ray remote function, made once per process."""
    global _task
    if _task is None:
        _task = ray.remote(_run_task)
    return _task


def _run_task(
    argv: list[str], timeout_s: float, cwd: str | None, files: dict[str, bytes], cases: list[AgentCase], sample: int,
    retry: int,
) -> list[AgentResult]:
    """One Ray task: the local command agent on `cases`, one at a time, in a fresh skills folder."""
    if cwd is not None and not os.path.isdir(cwd):
        why = f"the workspace folder {cwd} does not exist on Ray node {socket.gethostname()} (the agent runs there)"
        return [AgentResult(c.id, error=why) for c in cases]
    return CommandExecutor(argv, timeout_s, 1, Path(cwd) if cwd else None).run_files(cases, files, sample, retry)
