"""Stage `gate`: the gate's verdict on an evaluated child against S0 (never against the parent),
case by case, per category (evolution/compare/gate.py).

One gate object per run (`run_gate`): the run's `Gate` on the selection outcomes (`PlainGate`),
wrapped by what the run's settings add:
- `SequentialSampling` (the noise-aware gate with more samples to draw): a child is decided by
  evolution/compare/sequential.py, which may draw more samples of S0 and the child; they are kept in
  their evaluations' `gate_samples` through the evaluation log as they arrive (paid answers are never
  drawn twice). With early rejection on, a look's samples of the child come in stages and stop once
  its rejection is certain (and, when attribution may analyse the child, once its failing categories
  are too).
- `EarlyRejected`: a child whose evaluation stopped early gets the verdict that is certain whatever
  its unevaluated cases give.
A case lost on either side is compared on neither: its missing answer says nothing of the skills.
Each judgement returns a `GateRecord` (evolution/round/record.py).

Raises (from `judge`):
    FramesError: the child was rejected early, yet its results no longer make the rejection certain;
        or the sequential gate needs samples the run cannot draw.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from frames_cli.errors import FramesError
from frames_cli.evolution.compare.early import certain_rejection
from frames_cli.evolution.compare.sequential_draw import sequential_verdict
from frames_cli.evolution.round.record import GateRecord
from frames_cli.evolution.state.run_ids import BASE_ID

if TYPE_CHECKING:
    from frames_cli.evolution.compare.gate import Gate
    from frames_cli.evolution.compare.sequential import SequentialGate
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.evolution.round.evaluations import EvaluationLog
    from frames_cli.evolution.round.outcomes import RunOutcomes
    from frames_cli.evolution.state.settings import Settings


@dataclass(frozen=True)
class GatedChild:
    """What the gate judges: an evaluated child.

    Attributes:
        view: the candidates' outcomes as they count now.
        cid: the child's candidate id.
        files: its skills/ files, read only when samples are drawn.
        parent: its parent's id.
    """

    view: RunOutcomes
    cid: str
    files: Callable[[], Mapping[str, bytes]]
    parent: str


class ChildGate(Protocol):
    """The run's gate as a round asks it: a verdict and its record for an evaluated child."""

    def judge(self, child: GatedChild) -> GateRecord:
        """The verdict on `child` against S0, with the cases left out as lost."""
        ...


@dataclass(frozen=True)
class PlainGate:
    """The run's `Gate` on the selection outcomes of S0 and the child, lost cases left out on both sides."""

    gate: Gate

    def judge(self, child: GatedChild) -> GateRecord:
        """`gate.check` on what the child and S0 both answered."""
        view = child.view
        lost = view.lost(BASE_ID) | view.lost(child.cid)
        return GateRecord(
            self.gate.check(view.selection(BASE_ID, lost), view.selection(child.cid, lost)), tuple(sorted(lost))
        )


@dataclass(frozen=True)
class SequentialSampling:
    """The sequential gate around `inner`: a child not rejected early is decided look by look, drawing more
    samples through `draw` (candidate id, its files, case ids, first sample, count); `stage` cases a batch."""

    inner: ChildGate
    seq: SequentialGate
    stage: int
    draw: Callable[[str, Callable[[], Mapping[str, bytes]], list[str], int, int], None]

    def judge(self, child: GatedChild) -> GateRecord:
        """The sequential verdict, or `inner`'s for a child rejected early."""
        view, cid = child.view, child.cid
        if view.store.evaluation(cid).early_stop:
            return self.inner.judge(child)

        def draw(side: str, ids: list[str], first: int, count: int) -> None:
            self.draw(BASE_ID if side == "baseline" else cid, child.files, ids, first, count)

        verdict = sequential_verdict(
            self.seq, lambda: (view.drawn(BASE_ID), view.drawn(cid)), draw, self.stage,
            view.attributable(child.parent, child.files()),
        )
        lost = set(view.drawn(BASE_ID).lost_at) | set(view.drawn(cid).lost_at)
        return GateRecord(verdict, tuple(sorted(lost)))


@dataclass(frozen=True)
class EarlyRejected:
    """Early rejection around `inner`: a child whose evaluation stopped early gets the rejection that is
    certain under `gate` whatever its unevaluated cases give; other children go to `inner`. With a
    sequential gate (`seq`) the rejection was decided at its first look, whose α is recorded."""

    inner: ChildGate
    gate: Gate
    seq: SequentialGate | None

    def judge(self, child: GatedChild) -> GateRecord:
        """The certain rejection of a child rejected early, or `inner`'s verdict."""
        view, cid = child.view, child.cid
        early_stop = view.store.evaluation(cid).early_stop
        if not early_stop:
            return self.inner.judge(child)
        lost = view.lost(BASE_ID) | view.lost(cid)
        certain = certain_rejection(
            self.gate, view.selection(BASE_ID, lost), view.selection(cid, lost), early_stop["skipped"]
        )
        if certain is None:
            raise FramesError(f"{cid} was rejected early, yet its results no longer make the rejection certain")
        verdict = dataclasses.replace(certain, early_stop=early_stop)
        if self.seq is not None:  # decided at the first look: α there is α_1 of the run's α
            verdict = dataclasses.replace(verdict, alpha=self.seq.gate.alpha, sequential=self.seq.record())
        return GateRecord(verdict, tuple(sorted(lost)))


def run_gate(ctx: RunContext, log: EvaluationLog, settings: Settings) -> ChildGate:
    """The run's one gate: `ctx.gate`, sequential when the run samples further, early-rejection aware."""
    plain: ChildGate = PlainGate(ctx.gate)
    if ctx.sequential is not None:
        stage = settings.stage_cases if settings.early_rejection else 0
        plain = SequentialSampling(plain, ctx.sequential, stage, functools.partial(_draw, ctx, log))
    return EarlyRejected(plain, ctx.gate, ctx.sequential)


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
