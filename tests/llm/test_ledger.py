"""The spend ledger: totals that do not depend on the order calls finish in.

Invariants:
1. The same calls recorded in any order give the same ledger, USD to the last digit (worker
   threads finish calls in an order they decide; float sums depend on the order of their terms).
2. Saved and loaded, then added to, a ledger keeps counting exactly; merged worker totals too.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from frames_cli.llm.store.ledger import Ledger
from frames_cli.llm.messages.types import Usage

#: Costs whose plain float sum differs by order (0.4607765 or 0.46077650000000003).
COSTS = [0.18232109999999999 / 3, 0.1, 1e-7 * 3, 0.3, 2.5e-6]


def _ledger(costs: list[float], path: Path | None = None) -> Ledger:
    ledger = Ledger(path=path)
    for usd in costs:
        ledger.record_call("executor", Usage(10, 2, usd))
    return ledger


def test_the_same_calls_in_any_order_give_the_same_ledger() -> None:
    assert len({sum(p) for p in itertools.permutations(COSTS)}) > 1  # the orders do differ as floats
    ledgers = {json.dumps(_ledger(list(order)).to_dict(), sort_keys=True) for order in itertools.permutations(COSTS)}
    assert len(ledgers) == 1
    assert json.loads(ledgers.pop())["total_usd"] == 0.4607765


def test_a_saved_ledger_and_merged_totals_keep_counting_exactly(tmp_path: Path) -> None:
    first = _ledger(COSTS[:2], tmp_path / "ledger.json")
    first.save()
    resumed = Ledger(path=tmp_path / "ledger.json")
    for usd in COSTS[2:]:
        resumed.record_call("executor", Usage(10, 2, usd))
    merged = Ledger()
    merged.add_totals(_ledger(COSTS[3:]).to_dict()["roles"])
    merged.add_totals(_ledger(COSTS[:3]).to_dict()["roles"])
    assert resumed.to_dict() == merged.to_dict() == _ledger(COSTS).to_dict()
    assert resumed.roles["executor"].calls == 5 and resumed.total_tokens == 60
