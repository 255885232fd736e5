"""The spend ledger of a run: calls, tokens and USD per role, and the hard budget check."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from frames_cli.errors import BudgetExceeded
from frames_cli.llm.messages.types import Usage
from frames_cli.files.atomic import atomic_write_json

#: pico-USD per USD: the ledger's unit of account.
PICO = 10**12


@dataclass
class RoleTotals:
    """Totals of one role.

    Attributes:
        calls: model calls made (each retry and repair turn counts; cache hits do not).
        cached: requests served from the cache (free).
        failed: requests that ended with an error.
        prompt_tokens / completion_tokens: tokens of the calls made.
        cached_prompt_tokens: the part of `prompt_tokens` providers read from their prompt cache
            (priced at the cached rate in `cost_usd` where litellm knows it).
        cost_usd: USD of the calls whose price litellm knows (summed in pico-USD integers by the
            Ledger, so calls finishing in another order give the same total to the last digit).
        unpriced_calls: calls whose price was unknown (their cost is missing from `cost_usd`).
        batch_calls: calls answered through the provider's batch API (`llm.batch`), priced at its
            batch price (part of `calls`).
    """

    calls: int = 0
    cached: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    batch_calls: int = 0


class Ledger:
    """What a run has spent, per role, with the budget limits of `frames.yaml` (`budget.*`).

    Thread-safe. `check()` is called before every model call: when the tokens or USD spent reach a
    limit it raises BudgetExceeded, so a run stops between calls; calls already in flight still
    finish and are recorded (the total may pass the limit by at most their size).

    USD is added as whole pico-USD (each call's cost rounded to 1e-12 USD): float sums depend on
    the order of their terms, and calls finish in an order the threads decide, so two identical
    runs once recorded $0.3130251 and $0.31302509999999995.
    """

    def __init__(self, max_tokens: int | None = None, max_usd: float | None = None, path: Path | None = None):
        self.max_tokens = max_tokens
        self.max_usd = max_usd
        self.path = path
        self.roles: dict[str, RoleTotals] = {}
        self._pico_usd: dict[str, int] = {}  # role → cost_usd in pico-USD: integer sums do not depend on order
        # Re-entrant: the totals take it too (a role added by another thread mid-sum raised
        # "dictionary changed size during iteration"), and to_dict reads them while holding it.
        self._lock = threading.RLock()
        if path is not None and Path(path).exists():
            self._load(Path(path))

    def _load(self, path: Path) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        self.roles = {role: RoleTotals(**totals) for role, totals in data.get("roles", {}).items()}
        self._pico_usd = {role: _pico(t.cost_usd) for role, t in self.roles.items()}

    def _add_usd(self, role: str, usd: float) -> None:
        """Add `usd` to `role`'s cost (lock held)."""
        self._pico_usd[role] = self._pico_usd.get(role, 0) + _pico(usd)
        self._role(role).cost_usd = self._pico_usd[role] / PICO

    def _role(self, role: str) -> RoleTotals:
        return self.roles.setdefault(role, RoleTotals())

    def record_call(self, role: str, usage: Usage, batch: bool = False) -> None:
        """Add one model call's usage (tokens, USD) to `role`; `batch`: it was answered in a provider batch."""
        with self._lock:
            totals = self._role(role)
            totals.calls += 1
            totals.batch_calls += batch
            totals.prompt_tokens += usage.prompt_tokens
            totals.completion_tokens += usage.completion_tokens
            totals.cached_prompt_tokens += usage.cached_prompt_tokens
            if usage.cost_usd is None:
                totals.unpriced_calls += 1
            else:
                self._add_usd(role, usage.cost_usd)

    def record_cached(self, role: str) -> None:
        """Count one request of `role` answered from the cache (no tokens, no cost)."""
        with self._lock:
            self._role(role).cached += 1

    def record_failed(self, role: str) -> None:
        """Count one request of `role` that ended with an error."""
        with self._lock:
            self._role(role).failed += 1

    def add_totals(self, roles: dict[str, dict[str, Any]]) -> None:
        """Add another ledger's per-role totals (the `"roles"` of its `to_dict()`) to this one.

        Used to merge the ledgers of `frames eval --jobs N` worker processes into the run's.
        """
        with self._lock:
            for role, totals in roles.items():
                mine = self._role(role)
                for name, value in totals.items():
                    if name == "cost_usd":
                        self._add_usd(role, value)
                    else:
                        setattr(mine, name, getattr(mine, name) + value)

    @property
    def total_tokens(self) -> int:
        """Prompt + completion tokens of every call of the run (tokens)."""
        with self._lock:
            return sum(t.prompt_tokens + t.completion_tokens for t in self.roles.values())

    @property
    def total_usd(self) -> float:
        """USD of the priced calls of the run."""
        with self._lock:
            return sum(self._pico_usd.values()) / PICO

    def check(self) -> None:
        """Raise BudgetExceeded when a limit is reached; otherwise return.

        Raises:
            BudgetExceeded: tokens spent ≥ `budget.max_tokens` or USD spent ≥ `budget.max_usd`.
        """
        if self.max_tokens is not None and self.total_tokens >= self.max_tokens:
            raise BudgetExceeded(f"token budget spent: {self.total_tokens} of budget.max_tokens = {self.max_tokens}")
        if self.max_usd is not None and self.total_usd >= self.max_usd:
            raise BudgetExceeded(f"USD budget spent: ${self.total_usd:.4f} of budget.max_usd = ${self.max_usd}")

    def to_dict(self) -> dict[str, Any]:
        """`{"roles": {role: totals}, "total_tokens", "total_usd", "budget"}` (the `ledger.json` content)."""
        with self._lock:
            return {
                "roles": {role: asdict(t) for role, t in sorted(self.roles.items())},
                "total_tokens": self.total_tokens,
                "total_usd": self.total_usd,
                "budget": {"max_tokens": self.max_tokens, "max_usd": self.max_usd},
            }

    def save(self) -> None:
        """Write `ledger.json` atomically (no-op without a path)."""
        if self.path is not None:
            atomic_write_json(self.path, self.to_dict())


def _pico(usd: float) -> int:
    """`usd` in whole pico-USD (rounded to the nearest)."""
    return round(usd * PICO)
