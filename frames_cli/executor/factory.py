"""Builds the agent under test that `frames.yaml` names (`executor.kind`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from frames_cli.executor.base import Executor
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace


def make_executor(ws: Workspace, config: FramesConfig, client: ModelClient) -> Executor:
    """The agent under test named by `executor.kind` (see `registry.EXECUTORS`); a command agent
    runs on Ray tasks with `eval.backend: ray` (executor/ray_backend.py, connected here).

    Raises:
        ConfigError: unknown kind (the message lists the valid ones), kind `command` without
            `executor.command`, or `eval.backend: ray` without Ray installed (exit code 2; the
            message names frames.yaml).
    """
    from frames_cli.errors import ConfigError, Location
    from frames_cli.registry import EXECUTORS

    kind = EXECUTORS.validate(config.executor.kind)
    cls = EXECUTORS.load(kind)
    if kind == "builtin":
        return cls(client, config.executor)
    if not config.executor.command:
        raise ConfigError(
            "`executor.command` must name your agent program when `executor.kind` is command", Location(ws.config_path)
        )
    if config.eval.backend == "ray":
        from frames_cli.executor.ray_backend import RayCommandExecutor, ray_module

        ray_module(ws.config_path)  # Ray missing is a configuration error now, before any case runs
        return RayCommandExecutor(config.executor.command, config.executor.timeout_s, ws.root, config.eval.ray_cpus)
    return cls(config.executor.command, config.executor.timeout_s, config.llm.concurrency, ws.root)
