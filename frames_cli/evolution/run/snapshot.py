"""What a new evolve run is fixed to (the settings snapshot),
its fingerprint, and what changed since a resumed run began."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from frames_cli.evolution.propose.guards import GUARD_RULES
from frames_cli.evolution.state.records import RunState
from frames_cli.evolution.state.run_warnings import GuardRulesChanged
from frames_cli.evolution.state.settings import Settings

if TYPE_CHECKING:
    from frames_cli.evolution.round.record import LoopMemory
    from frames_cli.formats.case import Case
    from frames_cli.workspace.config import FramesConfig

#: The snapshot's key for the guards' rules version (1 in runs recorded before it existed: evolution/state/upgrades.py).
GUARD_RULES_KEY = "guard_rules"
#: Roles whose model strings go into the Frames-Models trailer.
MODEL_ROLES = ("executor", "diagnoser", "rewriter", "judge")


def changed_since(state: RunState, snapshot: dict[str, Any], cases: Iterable[Case]) -> list[str]:
    """What differs between a resumed run's start and now, as names ("frames.yaml's evolution
    settings", "the cases"); empty when nothing does. A run is fixed to its start, so a user who
    edited frames.yaml or the cases must be told the edit waits for the next run. `--max-rounds`
    and `--seed` given now are overrides, not changes."""

    def comparable(name: str, section: Any) -> Any:
        return (
            {k: v for k, v in section.items() if k not in ("max_rounds", "seed")} if name == "evolution" and section
            else section
        )

    settings = sorted(name for name in snapshot if name != GUARD_RULES_KEY)
    changed = [
        f"frames.yaml's {name} settings"
        for name in settings
        if comparable(name, snapshot[name]) != comparable(name, state.config.get(name))
    ]
    if state.fingerprint and run_fingerprint(cases, state.config) != state.fingerprint:
        changed.append("the cases")
    return changed


def guard_rules_note(state: RunState, snapshot: dict[str, Any]) -> GuardRulesChanged | None:
    """A warning when the guards' rules this frames applies (`guards.GUARD_RULES`) are not those
    the resumed run started with, else None. Unlike a setting, code cannot wait for the next run:
    the run's later rounds drop proposals by the new rules, its earlier rounds kept what the old
    ones let through, and a re-run of the same cases and settings can drop differently."""
    then, now = state.config[GUARD_RULES_KEY], snapshot[GUARD_RULES_KEY]
    if then == now:
        return None
    return GuardRulesChanged(state.run_id, then, now)


def run_snapshot(config: FramesConfig, *, seed: int | None = None, max_rounds: int | None = None) -> dict[str, Any]:
    """The settings a new run is fixed to, as plain JSON: {"evolution": settings.Settings JSON with the
    `--seed` / `--max-rounds` overrides, "models": {role: model string}, "executor": executor.*,
    "guard_rules": the version of the guards' rules, `guards.GUARD_RULES`}. The version is part of
    the fingerprint: after an upgrade that changes what the guards drop, the same cases and
    settings no longer do the same work, so `frames evolve` runs again instead of saying "up to date".

    Raises:
        ConfigError: q exceeds D.
    """
    from frames_cli.workspace.config import with_overrides

    overrides = {k: v for k, v in (("seed", seed), ("max_rounds", max_rounds)) if v is not None}
    settings = Settings.from_config(with_overrides(config, "evolution", **overrides))
    return {
        "evolution": settings.to_json(),
        "models": {role: getattr(config.models, role) for role in MODEL_ROLES},
        "executor": dataclasses.asdict(config.executor),
        GUARD_RULES_KEY: GUARD_RULES,
    }


def run_settings(state: RunState, memory: LoopMemory, concurrency: int) -> Settings:
    """The settings this start of the run works with: those it started with (`state.settings`), with
    the rounds a resume asked for (`memory.max_rounds`). A run recorded before `stage_cases` was
    fixed (0) stages its children by `llm.concurrency` as read now (`concurrency`), as it did."""
    settings = state.settings
    if memory.max_rounds is not None:
        settings = dataclasses.replace(settings, max_rounds=memory.max_rounds)
    if not settings.stage_cases:
        settings = dataclasses.replace(settings, stage_cases=concurrency)
    return settings


def run_fingerprint(cases: Iterable[Case], snapshot: dict[str, Any]) -> str:
    """sha256 hex over the counted cases (sorted by id, each as its canonical case-file record) and
    the settings snapshot. Two runs with the same base and fingerprint do the same work, so
    `frames evolve` skips the second (see driver.EvolveOptions.force)."""
    digest = hashlib.sha256(_canonical(snapshot))
    for case in sorted(cases, key=lambda c: c.id):
        digest.update(b"\n" + _canonical(case.to_dict()))
    return digest.hexdigest()


def _canonical(obj: Any) -> bytes:
    """Canonical JSON (sorted keys, no spaces, UTF-8): equal data, equal bytes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
