"""Stage `gate`: the gate's verdict on an evaluated child against S0 (never against the parent),
case by case, per category (evolution/compare/gate.py).

A case lost on either side is compared on neither: its missing answer says nothing of the skills. A
child rejected early gets the verdict that is certain whatever its unevaluated cases give. With
sequential sampling on, a child not rejected early is decided by evolution/compare/sequential.py,
which may draw more samples of S0 and the child; they are kept in their evaluations' `gate_samples`
through the evaluation log as they arrive (paid answers are never drawn twice). With early rejection
on, a look's samples of the child come in stages and stop once its rejection is certain (and, when
attribution may analyse the child, once its failing categories are too).

Returns a `GateRecord` (evolution/round/record.py): the verdict and the cases left out as lost.

Raises:
    FramesError: the child was rejected early, yet its results no longer make the rejection certain;
        or the sequential gate needs samples the run cannot draw.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from frames_cli.errors import FramesError
from frames_cli.evolution.compare.early import certain_rejection
from frames_cli.evolution.compare.sequential import sequential_verdict
from frames_cli.evolution.round.record import GateRecord
from frames_cli.evolution.state.run_ids import BASE_ID

if TYPE_CHECKING:
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.evolution.round.evaluations import EvaluationLog
    from frames_cli.evolution.round.outcomes import RunOutcomes
    from frames_cli.evolution.state.settings import Settings


def gate_child(
    ctx: RunContext, view: RunOutcomes, log: EvaluationLog, settings: Settings, cid: str,
    files: Callable[[], Mapping[str, bytes]], parent: str,
) -> GateRecord:
    """The gate's verdict on the evaluated child `cid` of `parent`, made of `files()` (read only to draw samples)."""
    seq, evaluation = ctx.sequential, view.store.evaluation(cid)
    if seq is not None and not evaluation.early_stop:
        stage = settings.stage_cases if settings.early_rejection else 0

        def draw(side: str, ids: list[str], first: int, count: int) -> None:
            _draw(ctx, log, BASE_ID if side == "baseline" else cid, files, ids, first, count)

        verdict = sequential_verdict(
            seq, lambda: (view.drawn(BASE_ID), view.drawn(cid)), draw, stage, view.attributable(parent, files())
        )
        lost = set(view.drawn(BASE_ID).lost_at) | set(view.drawn(cid).lost_at)
        return GateRecord(verdict, tuple(sorted(lost)))
    lost = view.lost(BASE_ID) | view.lost(cid)
    base = view.selection(BASE_ID, lost)
    if evaluation.early_stop:
        certain = certain_rejection(ctx.gate, base, view.selection(cid, lost), evaluation.early_stop["skipped"])
        if certain is None:
            raise FramesError(f"{cid} was rejected early, yet its results no longer make the rejection certain")
        verdict = dataclasses.replace(certain, early_stop=evaluation.early_stop)
        if seq is not None:  # decided at the first look: α there is α_1 of the run's α
            verdict = dataclasses.replace(verdict, alpha=seq.gate.alpha, sequential=seq.record())
    else:
        verdict = ctx.gate.check(base, view.selection(cid, lost))
    return GateRecord(verdict, tuple(sorted(lost)))


def _draw(
    ctx: RunContext, log: EvaluationLog, cid: str, files: Callable[[], Mapping[str, bytes]], case_ids: list[str],
    first: int, count: int,
) -> None:
    """Draw samples `first`… (`count` of them) of `case_ids` for candidate `cid` and keep them in its evaluation."""
    if ctx.sample_more is None:
        raise FramesError("the sequential gate needs more samples, but this run cannot draw them")
    store = log.store
    skills = store.skill_set(cid, store.base_files if cid == BASE_ID else files())
    drawn = ctx.sample_more(cid, skills, case_ids, first, count)
    ev = store.evaluation(cid)
    log.keep(cid, dataclasses.replace(ev, gate_samples=[*ev.gate_samples, *drawn]))
