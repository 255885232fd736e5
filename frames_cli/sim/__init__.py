"""frames-sim: a litellm custom provider that models LLM behaviour (not an LLM) for offline runs.

Model strings `frames-sim/<role>` (executor, diagnoser, rewriter, generator, judge, coldstart) route
here through litellm's real completion path. Behaviour follows DESIGN §8 and the prompt conventions
in docs/ARCHITECTURE.md; answers are deterministic per `simulator.seed`.
"""

from __future__ import annotations

from typing import Any


def litellm_provider() -> Any:
    """The simulator as a litellm custom provider (`llm.transport.providers.LiteLLMProvider`), found through
    `registry.PROVIDERS`: the model layer registers it without importing this package by name."""
    from frames_cli.llm.transport.providers import SIM_PREFIX, LiteLLMProvider, sim_models
    from frames_cli.sim.provider import SimProvider

    return LiteLLMProvider(SIM_PREFIX, SimProvider(), sim_models())


def load_world(workspace: Any, config: Any) -> Any:
    """The world a client's simulated calls read when its caller gave none: the workspace's cases
    (`eval.cases`) and policies (`sim.world.SimWorld.from_workspace`; InputError for a bad case
    file). Imports no litellm, so a client can load it before any model call."""
    from frames_cli.sim.world import SimWorld

    return SimWorld.from_workspace(workspace, config)
