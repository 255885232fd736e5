"""state.json's upgrades: one named step per schema version, each turning a record of that version
into one of the next, so that code reads only today's schema and an old run reads as it did.

A step works on plain JSON (before the record is checked), and is frozen once it has landed: it
writes the values an old record meant, never today's defaults, which may change.
"""

from __future__ import annotations

from typing import Any


def upgrade(data: dict[str, Any], version: int) -> dict[str, Any]:
    """`data` (state.json of any schema up to `version`; one without `schema` is schema 1) upgraded to
    `version`, one step at a time."""
    for schema in range(max(1, data.get("schema", 1)), version):
        data = UPGRADES[schema](dict(data))
    return data


def _upgrade_1(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 → 2: the recommendation becomes a record. A finished schema-1 run recommended the
    front member with the highest pass rate among those whose gain on the unseen selection cases
    had p ≤ α / m (Bonferroni over the m children evaluated); that verdict is kept as it was made."""
    evolution = (data.get("config") or {}).get("evolution") or {}
    alpha = float(evolution.get("recommend_alpha", 1.0))
    data["schema"] = 2
    if (data.get("status") != "finished" and not data.get("branch")) or "recommendation" in data or alpha >= 1:
        return data  # under the paper's rule RunState.best decides live, as before
    children = [c for c in data.get("candidates", []) if isinstance(c, dict) and c.get("parent_id") is not None
                and c.get("pass_rate") is not None]
    bar = alpha / max(1, len(children))
    front = set(data.get("front", []))
    members = [c for c in children
               if c.get("id") in front and isinstance(c.get("gain_p"), (int, float)) and c["gain_p"] <= bar]
    member = max(members, key=lambda c: (c["pass_rate"], -(c.get("mean_tokens") or 0.0)), default=None)
    found = (f"p = {member['gain_p']:.2g} on unseen cases, at most α / m = {bar:.2g}" if member
             else f"no gain on unseen cases reached α / m = {bar:.2g}")
    note = f"recorded before frames kept the evidence: {found}"
    data["recommendation"] = {"member": member["id"] if member else None, "status": "final" if member else "none",
                              "alpha": alpha, "rule": "legacy", "note": note}
    return data




#: schema version → the step that upgrades a state of that version to the next.
UPGRADES = {1: _upgrade_1}
