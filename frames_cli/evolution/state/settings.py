"""The evolution settings a run is fixed to at its start, kept in its record."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frames_cli.errors import ConfigError

if TYPE_CHECKING:
    from frames_cli.workspace.config import FramesConfig


def resolve_threshold(q: int | str, diagnosers: int) -> int:
    """Turn the configured q (a number or "all") into a vote count for `diagnosers` diagnosers.

    `all` means every diagnoser that was asked, so a failed diagnoser call (which counts as no
    proposals) blocks unanimous changes rather than lowering the bar.

    Raises:
        ConfigError: q is larger than D, so no change could ever be accepted.
    """
    threshold = diagnosers if q == "all" else int(q)
    if threshold > diagnosers:
        raise ConfigError(
            f"`evolution.vote_threshold` ({q}) exceeds `evolution.diagnosers` ({diagnosers}): no change could ever "
            "pass the vote"
        )
    return threshold


@dataclass(frozen=True)
class Settings:
    """The evolution settings a run is fixed to (from `evolution.*`, `eval.samples`, `eval.lost_retries`
    and `llm.concurrency` in frames.yaml), kept in its record (`RunState.config["evolution"]`).

    Each field means what its config field says, except: `vote_threshold` is q as a count of
    diagnosers (see `resolve_threshold`); `retrieval`, `split`, `guards`, `cost` and `pending` are
    their config blocks as dicts; `stage_cases` is `llm.concurrency` at the start: the cases a
    child's staged evaluation runs between two looks of early rejection, fixed so that a resume
    with another concurrency stops a child after the same cases (0 in runs recorded before it was
    fixed: evolution/run/snapshot.run_settings). A run recorded before a setting existed is upgraded
    when read to the value that gave its old behaviour (evolution/state/upgrades.py), so every field
    is always there.
    """

    max_rounds: int
    patience: int
    diagnosers: int
    batch_size: int | str
    vote_threshold: int
    tolerance: float
    anchor_cases: int
    rewrite_retries: int
    max_body_lines: int
    seed: int
    samples: int
    retrieval: dict[str, Any]
    gate: str
    gate_alpha: float
    split: dict[str, Any]
    merge_threshold: float | None
    duplicate_threshold: float
    guards: dict[str, bool]
    early_rejection: bool
    gate_max_samples: int
    attribution_steps: int
    cost: dict[str, Any]
    lost_retries: int
    recommend_alpha: float
    stage_cases: int
    confirm_limit: int
    pending: dict[str, int]

    @classmethod
    def from_config(cls, config: FramesConfig) -> Settings:
        """Read the settings from `config`.

        Raises:
            ConfigError: q exceeds D.
        """
        ev = config.evolution
        return cls(
            max_rounds=ev.max_rounds,
            patience=ev.patience,
            diagnosers=ev.diagnosers,
            batch_size=ev.batch_size,
            vote_threshold=resolve_threshold(ev.vote_threshold, ev.diagnosers),
            tolerance=ev.tolerance,
            anchor_cases=ev.anchor_cases,
            rewrite_retries=ev.rewrite_retries,
            max_body_lines=ev.max_body_lines,
            seed=ev.seed,
            samples=config.eval.samples,
            retrieval=dataclasses.asdict(ev.retrieval),
            gate=ev.gate,
            gate_alpha=ev.gate_alpha,
            split=dataclasses.asdict(ev.split),
            merge_threshold=ev.merge_threshold,
            duplicate_threshold=ev.duplicate_threshold,
            guards=dataclasses.asdict(ev.guards),
            early_rejection=ev.early_rejection,
            recommend_alpha=ev.recommend_alpha,
            confirm_limit=ev.confirm_limit,
            pending=dataclasses.asdict(ev.pending),
            stage_cases=config.llm.concurrency,
            gate_max_samples=ev.gate_max_samples,
            attribution_steps=ev.attribution_steps,
            cost=dataclasses.asdict(ev.cost),
            lost_retries=config.eval.lost_retries,
        )

    def to_json(self) -> dict[str, Any]:
        """Every field as JSON-ready data (nested dataclasses become dicts)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Settings:
        """The settings a run was started with (a resumed run keeps them, whatever frames.yaml says now).

        Raises:
            TypeError: a setting is missing or unknown (a record is upgraded to every setting when read).
        """
        return cls(**obj)
