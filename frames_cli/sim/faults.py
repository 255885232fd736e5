"""Faults the simulator injects at the rates of `simulator.faults`: errors, broken and cut replies."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from frames_cli.workspace.config import FaultsConfig


@dataclass(frozen=True)
class FaultDraw:
    """Which faults hit one call (each drawn independently at its configured rate)."""

    rate_limit: bool = False
    timeout: bool = False
    malformed_json: bool = False
    truncated: bool = False


def draw(faults: FaultsConfig, stream: Callable[[], random.Random]) -> FaultDraw:
    """Draw the faults of one call from the generator `stream()` makes (the call's fault stream).

    Always four draws, so later draws do not shift with the rates. With every rate 0 no draw can
    hit (`random()` < 0 never holds), so the stream is not made: seeding it costs a hash of the
    whole prompt.
    """
    rates = (faults.rate_limit, faults.timeout, faults.malformed_json, faults.truncated)
    if not any(rates):
        return FaultDraw()
    rng = stream()
    return FaultDraw(*(rng.random() < rate for rate in rates))


def raise_transient(draw_: FaultDraw, model: str, timeout_s: float | None) -> None:
    """Raise litellm's RateLimitError or Timeout when the draw says so (the client retries these).

    Raises:
        litellm.RateLimitError, litellm.Timeout
    """
    import litellm

    if draw_.rate_limit:
        raise litellm.RateLimitError("frames-sim: simulated rate limit", llm_provider="frames-sim", model=model)
    if draw_.timeout:
        raise litellm.Timeout(
            f"frames-sim: simulated timeout after {timeout_s} s", model=model, llm_provider="frames-sim"
        )


def damage(text: str, draw_: FaultDraw) -> tuple[str, str]:
    """The reply text and finish reason after output faults.

    malformed_json: Python-style single quotes and no closing brace, after a chatty prefix (a
    common failure of real models), so no valid answer object can be
    extracted. truncated: the text is cut in half, finish reason "length".
    """
    if draw_.malformed_json:
        text = "Here is my answer: " + text.strip().replace('"', "'").removesuffix("}")
    if draw_.truncated:
        return text[: len(text) // 2], "length"
    return text, "stop"
