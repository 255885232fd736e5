"""Whether a tau2 case can be passed from its input: each fact the
reply must mention is in the input or can be worked out from it.

A one-turn case stands for a whole conversation whose tool calls are gone: what the agent would
have looked up must already be in `input.fields`. A fact the reply must mention
(`communicate_info`) that the input neither holds nor lets the agent work out makes a case no
agent can pass (τ² retail task 39 asks for the price of the cheapest available t-shirt, a product
the customer never ordered; before the retail context added the products a customer names, its
input held no t-shirt). `untellable` names the facts that are certainly out of reach:

- a fact in words ("mastercard", a tracking number) that the input does not hold;
- a figure that the input does not hold when the input holds no amount at all (no ``price``,
  ``amount``, ``balance``, ... field) to work it out from.

A figure that is not written in the input but may be a sum or difference of its amounts (a refund
total, a fare difference: most of τ² airline's) is not flagged: whether a given sum is meant cannot
be told mechanically, and a warning on every such case would bury the ones that matter.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from frames_cli.evaluation.normalise import amount, holds

#: Field names that hold money: a figure the reply must mention can be worked out from them.
AMOUNT_KEYS = ("price", "amount", "balance", "cost", "total", "fee", "refund")


def _has_amounts(value: Any) -> bool:
    """Whether `value` holds a number under a key naming money (`AMOUNT_KEYS`), at any depth."""
    if isinstance(value, dict):
        return any(
            (any(k in str(key).casefold() for k in AMOUNT_KEYS) and (isinstance(v, (int, float)) or _has_amounts(v)))
            or _has_amounts(v)
            for key, v in value.items()
        )
    if isinstance(value, list):
        return any(_has_amounts(v) for v in value)
    return False


def untellable(required: Sequence[str], task_input: dict[str, Any]) -> list[str]:
    """The facts of `required` certainly out of reach of an agent that sees `task_input` (rules in
    the module docstring), in their order; [] when none is."""
    known = json.dumps(task_input, ensure_ascii=False)
    amounts = _has_amounts(task_input.get("fields"))
    return [fact for fact in required if not holds(known, fact) and (amount(fact) is None or not amounts)]
