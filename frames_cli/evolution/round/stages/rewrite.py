"""Stage `rewrite`: each blueprint's skill rewritten by the rewriter, guarded, retried with the
validator's errors and dropped when it never validates (evolution/propose/rewrite.py).

The rewriter of a skill sees anchor cases from the regression pool, the reviewer's priors for it and
the rewrites of it that earlier rounds and runs left out. Returns a `Rewrites`; writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from frames_cli.evolution.propose.guards import RewriteGuard
from frames_cli.evolution.propose.lessons import left_out_notes
from frames_cli.evolution.propose.rewrite import RewriteLimits, RewriteOutcome, rewrite
from frames_cli.sanitize import cut_at_word, one_line

if TYPE_CHECKING:
    from frames_cli.evolution.propose.consensus import Blueprint
    from frames_cli.evolution.propose.lessons import Lesson
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.evolution.state.settings import Settings
    from frames_cli.formats.skill_set import SkillSet


@dataclass(frozen=True)
class Rewrites:
    """The round's rewrites.

    Attributes:
        outcomes: one RewriteOutcome per blueprint, in the blueprints' order.
        note: when every rewrite was dropped, why (the last error of each, for the console), else "".
    """

    outcomes: tuple[RewriteOutcome, ...] = ()
    note: str = ""


def rewrite_round(
    ctx: RunContext, settings: Settings, parent: SkillSet, blueprints: Sequence[Blueprint], round_no: int,
    lessons: Sequence[Lesson], run_id: str,
) -> Rewrites:
    """Rewrite the skills of `blueprints` from the `parent` skills in round `round_no` of run `run_id`;
    `lessons` are what this run tried and saw fail so far (earlier runs' come from `ctx`)."""
    if not blueprints:
        return Rewrites()
    n = settings.anchor_cases
    anchors = {b.skill: [ctx.cases[c] for c in ctx.anchors(b.skill, n) if c in ctx.cases] for b in blueprints}
    limits = RewriteLimits(
        settings.max_body_lines, settings.rewrite_retries, settings.duplicate_threshold, ctx.policy_sentences
    )
    priors = {b.skill: ctx.priors(b.skill) for b in blueprints}
    guard = RewriteGuard(ctx.policy_keeper, ctx.case_values)
    known = [*ctx.earlier_lessons, *lessons]
    left_out = {b.skill: left_out_notes(known, b.skill, run_id) for b in blueprints}
    outcomes = rewrite(
        ctx.client, parent, blueprints, anchors, limits, round_no=round_no, priors=priors, guard=guard,
        left_out=left_out,
    )
    if any(o.accepted for o in outcomes):
        return Rewrites(tuple(outcomes))
    # The last error of each dropped skill, so the console says why, not only the report.
    why = [f"{o.skill}: {cut_at_word(one_line(o.errors[-1][0]), 140)}" for o in outcomes if o.errors and o.errors[-1]]
    more = f"; and {len(why) - 2} more" if len(why) > 2 else ""
    return Rewrites(
        tuple(outcomes), "every rewrite was dropped by the validator" + (f": {'; '.join(why[:2])}{more}" if why else "")
    )
