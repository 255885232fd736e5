"""What every simulated role gets (SimCall) and gives back (a JSON-able answer): the Behaviour protocol."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any, Protocol

from frames_cli.sim.world import SimWorld
from frames_cli.workspace.config import SimulatorConfig


@dataclass
class SimCall:
    """One request to the simulator.

    Attributes:
        role: the role after `frames-sim/` in the model string.
        prompt: every message's content joined by blank lines (what the simulated model "reads").
        sample: the request's sample index (independent draws of one prompt).
        config: `simulator.*` of frames.yaml.
        world: the workspace's cases.
    """

    role: str
    prompt: str
    sample: int
    config: SimulatorConfig
    world: SimWorld
    _digest: str = field(default="", repr=False)

    def rng(self, *parts: object) -> random.Random:
        """A generator seeded by (seed, role, sample, prompt, *parts): same inputs, same draws.

        Behaviours pass the case id (and what the draw is for) as `parts`, so each case of a
        batch and each decision gets its own independent stream.
        """
        if not self._digest:
            self._digest = hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()
        key = "|".join(map(str, (self.config.seed, self.role, self.sample, self._digest, *parts)))
        return random.Random(hashlib.sha256(key.encode("utf-8")).digest())


class Behaviour(Protocol):
    """A simulated role: reads the prompt, returns the answer object (serialised as the reply JSON).

    Must be deterministic given `call` (draw only from `call.rng`) and must not raise on prompts it
    cannot read: it answers as a confused model would (empty or null answers), which the caller's
    schema validation then judges.
    """

    def __call__(self, call: SimCall) -> Any: ...
