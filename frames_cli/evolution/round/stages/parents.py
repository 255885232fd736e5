"""Stage `parents`: the round's parent, chosen round-robin over the front (evolution/round/selection.py).

Returns the parent's candidate id; the caller counts the pick in the loop's memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from frames_cli.evolution.round.scores import point

if TYPE_CHECKING:
    from frames_cli.evolution.round.selection import Selector
    from frames_cli.evolution.state.records import RunState


def choose_parent(selector: Selector, state: RunState, picks: Mapping[str, int]) -> str:
    """The id of the front member `selector` picks, given how often each was picked (`picks`)."""
    return selector.choose([point(state, c) for c in state.front_candidates()], dict(picks))
