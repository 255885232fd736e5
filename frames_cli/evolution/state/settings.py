"""The evolution settings a run is fixed to at its start (from `evolution.*`,
`eval.samples` and `eval.lost_retries`), kept in its checkpoint."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    """The evolution settings a run is fixed to (from `evolution.*`,
    `eval.samples` and `eval.lost_retries` in frames.yaml).

    `vote_threshold` is q as a count of diagnosers (see `resolve_threshold`); `retrieval` is
    `evolution.retrieval` as a dict ({} in runs started before it existed: they resume without
    retrieval); `gate`, `gate_alpha` and `early_rejection` take the defaults of frames.yaml in runs
    started before they existed; `split` is `evolution.split` as a dict (used once, when a new run
    divides its cases); `merge_threshold` is None and `duplicate_threshold` 1.0 in runs started
    before merging existed (they resume as they began: identical wording merged only, the guard
    nearly off); `guards` is `evolution.guards` likewise ({}: no guard); `attribution_steps` is 0
    (no sub-child) in runs started before attribution existed; `gate_max_samples` is 0 (no sequential
    sampling) in runs started before it existed; `lost_retries` is `eval.lost_retries`, and 2 (its
    default) in runs started before it was fixed at the start (they read frames.yaml on every
    resume; a retry only asks again for an answer the run would otherwise leave out); `recommend_alpha`
    is 1.0 (the highest pass rate is the best member, as in the paper) in runs started before it
    existed; `stage_cases` is `llm.concurrency` at the start: the cases a child's staged evaluation
    runs between two looks of early rejection, fixed so that a resume with another concurrency
    stops a child after the same cases (0 in runs started before it was fixed: they use
    `llm.concurrency` as read at each start); `confirm_limit` is the most children the
    recommendation tests (evolution/compare/evidence.py), `pending` `evolution.pending` as a dict
    (evolution/decide/prospective.py); the rest mean
    what their config fields say.
    """

    max_rounds: int
    patience: int
    diagnosers: int
    batch_size: int | str
    vote_threshold: int
    tolerance: float
    regression_sample: int
    anchor_cases: int
    rewrite_retries: int
    max_body_lines: int
    seed: int
    samples: int
    retrieval: dict = dataclasses.field(default_factory=dict)
    gate: str = "paper"
    gate_alpha: float = 0.05
    split: dict = dataclasses.field(default_factory=dict)
    merge_threshold: float | None = None
    duplicate_threshold: float = 1.0
    guards: dict = dataclasses.field(default_factory=dict)
    early_rejection: bool = True
    gate_max_samples: int = 0
    attribution_steps: int = 0
    cost: dict = dataclasses.field(default_factory=dict)
    lost_retries: int = 2
    recommend_alpha: float = 1.0
    stage_cases: int = 0
    confirm_limit: int = 3
    pending: dict = dataclasses.field(default_factory=lambda: {"min_new_cases": 10, "max_looks": 3})

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
            regression_sample=ev.regression_sample,
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

    def to_json(self) -> dict:
        """Every field as JSON-ready data (nested dataclasses become dicts)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, obj: dict) -> Settings:
        """The settings a run was started with (a resumed run keeps them, whatever frames.yaml says now)."""
        return cls(**obj)
