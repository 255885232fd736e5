"""Stage `diagnose`: what the round's parent fails, and the changes D diagnosers propose for it.

The parent's failing diagnosis-set cases are split into seeded batches; each diagnoser is given its
batch with the policy and past changes retrieved for it, and they answer concurrently
(evolution/propose/diagnose.py). When cost-directed rounds are on and the parent fails few cases, the
round is cost-directed instead (evolution/propose/cost.py): blueprints that condense its costliest
skills, and no diagnoser is called. Returns a `Diagnoses`; writes nothing (the caller records the
new label disputes it names).

Raises:
    ModelError: every diagnoser call of the round failed (a provider that refuses us).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frames_cli.errors import ModelError
from frames_cli.evolution.propose.cost import SkillCost, condense_blueprints, skill_costs
from frames_cli.evolution.propose.diagnose import DiagnoserResult, Failure, batching_note, diagnose, make_batches
from frames_cli.evolution.propose.guards import guard_proposals
from frames_cli.evolution.propose.lessons import tried_section
from frames_cli.evolution.state.round_events import (
    CostRound,
    LabelConfirmed,
    LabelDisputed,
    ProposalsDropped,
    RoundBatches,
)
from frames_cli.sanitize import cut_at_word

if TYPE_CHECKING:
    from frames_cli.evolution.propose.consensus import Blueprint
    from frames_cli.evolution.propose.lessons import Lesson
    from frames_cli.evolution.round.candidate_store import CandidateStore
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.evolution.round.outcomes import RunOutcomes
    from frames_cli.evolution.state.records import RunState
    from frames_cli.evolution.state.settings import Settings


@dataclass(frozen=True)
class Diagnoses:
    """What the round's diagnosis found.

    Attributes:
        kind: "failures" (diagnosers proposed changes) or "cost" (a cost-directed round).
        batches: case ids per diagnoser (none in a cost round, or when the parent fails no case).
        batching: how the batches were formed (diagnose.batching_note), "" when none were.
        results: one DiagnoserResult per diagnoser.
        note: why the round can make no child ("" when it may), or a cost round's one-line account.
        blueprints: a cost round's blueprints (a failures round's come from the vote).
        costs: a cost round's parent skills by tokens per case.
        disputes: the label disputes new to the run: case id → its record (evolution/state/disputes.py).
    """

    kind: str = "failures"
    batches: tuple[tuple[str, ...], ...] = ()
    batching: str = ""
    results: tuple[DiagnoserResult, ...] = ()
    note: str = ""
    blueprints: tuple[Blueprint, ...] = ()
    costs: tuple[SkillCost, ...] = ()
    disputes: Mapping[str, dict[str, Any]] = field(default_factory=dict)


def diagnose_round(
    ctx: RunContext, store: CandidateStore, view: RunOutcomes, settings: Settings, state: RunState,
    round_no: int, parent: str, lessons: Sequence[Lesson], known_disputes: Mapping[str, Any],
) -> Diagnoses:
    """Diagnose round `round_no`'s `parent` (see the module); `lessons` are what the run tried and saw fail,
    `known_disputes` the disputes the run knows already (case id → record)."""
    diagnosed = set(view.split.diagnosis) - view.excluded
    failing = {cid: rec for cid, rec in store.evaluation(parent).failing().items() if cid in diagnosed}
    s = settings
    if s.cost["enabled"] and len(failing) <= s.cost["max_failures"]:
        return _condense(ctx, store, settings, round_no, parent, diagnosed, len(failing))
    batches = make_batches(list(failing), s.batch_size, s.diagnosers, s.seed, round_no)
    if not batches:
        return Diagnoses(note="the parent fails no case")
    # Said before any model call: with fewer distinct batches than q no change can pass the vote.
    batching = batching_note(len(failing), batches, s.batch_size, s.diagnosers, s.vote_threshold)
    ctx.on_event(RoundBatches(round_no, batching))
    failures = [
        Failure(ctx.cases[cid], rec["output"], rec["reason"], rec["skills_used"], rec.get("trajectory", []))
        for cid, rec in failing.items()
    ]
    index = ctx.retriever(state.candidate(parent).commit)
    results = diagnose(
        ctx.client, store.skill_set(parent, store.files(parent)), failures, batches, round_no=round_no, index=index,
        tried=tried_section(list(lessons)), amendments=ctx.amendments,
    )
    if ctx.case_values is not None:
        dropped = guard_proposals(results, ctx.case_values)
        if dropped:
            # One line, not one per proposal: each is in state.json and `frames review`.
            ctx.on_event(ProposalsDropped(round_no, len(dropped), cut_at_word(dropped[0], 160)))
    if all(d.error for d in results):
        # One failed diagnoser is noise the vote absorbs; all of them failing is a provider
        # that refuses us (credentials, model name), and more rounds would only repeat it.
        raise ModelError(f"every diagnoser call of round {round_no} failed, first with: {results[0].error}")
    return Diagnoses(
        batches=tuple(tuple(b) for b in batches), batching=batching, results=tuple(results),
        disputes=_new_disputes(ctx, state.run_id, round_no, results, known_disputes),
    )


def _condense(
    ctx: RunContext, store: CandidateStore, settings: Settings, round_no: int, parent: str, diagnosed: set[str],
    failures: int,
) -> Diagnoses:
    """A cost-directed round (evolution/propose/cost.py): blueprints that condense the parent's costliest
    skills, measured on its diagnosis-set results; no diagnoser is called and nothing is voted."""
    results = [rec for rec in store.evaluation(parent).results if rec["case_id"] in diagnosed]
    costs = skill_costs(results, store.skill_set(parent, store.files(parent)))
    blueprints = condense_blueprints(costs, int(settings.cost["skills"]))
    few = "no diagnosis-set case" if failures == 0 else f"{failures} diagnosis-set case{'s' if failures > 1 else ''}"
    note = f"cost-directed: the parent fails {few}" if blueprints else f"the parent fails {few} and loads no skill"
    ctx.on_event(CostRound(round_no, note, tuple(c.line() for c in costs[: len(blueprints)])))
    return Diagnoses(kind="cost", note=note, blueprints=tuple(blueprints), costs=tuple(costs))


def _new_disputes(
    ctx: RunContext, run_id: str, round_no: int, results: Sequence[DiagnoserResult], known: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """The label disputes the diagnosers raised that the run did not know: case id → record. A case a
    person confirmed (`label: confirmed`) is said and kept."""
    new: dict[str, dict[str, Any]] = {}
    for d in results:
        for dispute in d.disputes:
            cid = dispute["case_id"]
            if cid in known or cid in new:
                continue
            if ctx.cases[cid].label == "confirmed":
                ctx.on_event(LabelConfirmed(round_no, d.diagnoser, cid))
                continue
            new[cid] = {"run": run_id, "round": round_no, "diagnoser": d.diagnoser, **dispute}
            ctx.on_event(LabelDisputed(round_no, cid, d.diagnoser))
    return new

