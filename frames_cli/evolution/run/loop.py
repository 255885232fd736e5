"""The evolution loop (DESIGN §4): S0, then rounds of parents → diagnose → vote → rewrite → evaluate → gate → commit."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from frames_cli.errors import BudgetExceeded, FramesError, ModelError
from frames_cli.llm.transport.batch import BatchPending
from frames_cli.evolution.round import commit as commits
from frames_cli.evolution.round.candidates import Candidates, skill_names
from frames_cli.evolution.state.checkpoint import LoopMemory, RoundRecord
from frames_cli.evolution.state.events import EvaluatingBase, Recommended, SealedScoring
from frames_cli.evolution.state.round_events import (
    AttributionStep,
    CostRound,
    EvaluatingChild,
    Gated,
    LabelConfirmed,
    LabelDisputed,
    NoChild,
    ProposalsDropped,
    RoundBatches,
    RoundParent,
)
from frames_cli.evolution.decide.confirm import recommend_run
from frames_cli.evolution.propose.consensus import Blueprint, vote
from frames_cli.evolution.propose.diagnose import DiagnoserResult, Failure, batching_note, diagnose, make_batches
from frames_cli.evolution.propose.cost import condense_blueprints, skill_costs
from frames_cli.evolution.propose.lessons import Lesson, left_out_notes, round_lessons, tried_section
from frames_cli.evolution.propose.guards import RewriteGuard, guard_proposals
from frames_cli.evolution.state.records import Candidate, RunState, utc_now
from frames_cli.evolution.state.run_ids import BASE_ID, candidate_id
from frames_cli.evolution.propose.rewrite import RewriteLimits, rewrite
from frames_cli.evolution.compare.scoring import score
from frames_cli.evolution.state.splits import Split
from frames_cli.sanitize import one_line

if TYPE_CHECKING:
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.evolution.state.settings import Settings

#: The stages of one round, in the order the method runs them; each ends with a checkpoint.
#: `attribute` makes the sub-children of a child that failed the gate (evolution/round/attribution.py).
STAGES = ("parents", "diagnose", "vote", "rewrite", "evaluate", "gate", "commit", "attribute")


class EvolutionRun:
    """Runs (or resumes) one evolve run to its end; `run()` and `round()` are the method in a few lines.

    Args:
        ctx: the run's collaborators.
        state: the run's record (new, or loaded to resume).
        memory: the loop's own progress (new, or from `state.checkpoint`).
        settings: the evolution settings this start works with (`snapshot.run_settings`).
        base_files: `skills/` files of the base commit.
    """

    def __init__(
        self, ctx: RunContext, state: RunState, memory: LoopMemory, settings: Settings, base_files: dict[str, bytes]
    ):
        self.ctx = ctx
        self.state = state
        self.memory = memory
        self.settings = settings
        self.base_files = base_files
        self.split = Split.from_json(memory.split) if memory.split else Split.single(memory.eval_case_ids)
        self.cands = Candidates(ctx, state, memory, settings, base_files, self.split)

    # --- the method ------------------------------------------------------------------------------

    def run(self) -> RunState:
        """Evaluate S0 (unless done), then run rounds until a stop condition; returns the state.

        Stop conditions: `max_rounds` rounds, `patience` rounds without a new front member, the
        budget (BudgetExceeded from the client: status "finished"), a stop file or SIGINT/SIGTERM
        (status "stopped": the next `frames evolve` resumes), provider batches to wait for
        (BatchPending, re-raised: status "stopped", the batch ids in `stop_reason`). The state is
        saved after every stage.

        Raises:
            FramesError: a git, input or model-layer error other than the budget; the state is saved
                first with status "failed" and the error.
        """
        self.state.status, self.state.stop_reason, self.state.finished, self.state.error = "running", None, None, None
        try:
            if not self.state.candidates:
                self.baseline()
            while not self.stopping():
                self.round()
            if self.state.status == "finished":
                self.recommend()
                self.seal()
        except BudgetExceeded:
            self.state.status, self.state.stop_reason = "finished", "budget"
            self.memory.pending = None
            # Its fresh samples cannot be paid for: it decides on what the run drew and says so.
            self.recommend()
        except BatchPending as exc:
            # Batch mode: the stage's calls went to the provider as batches (their ids are in the
            # reason). "stopped": the next `frames evolve` resumes here once they have ended.
            self.state.status, self.state.stop_reason = "stopped", str(exc)
            self.save()
            raise
        except FramesError as exc:
            # Recorded so `frames runs` shows why; `frames evolve --resume RUN` continues from the
            # last checkpoint once the cause is fixed.
            self.state.status, self.state.error = "failed", str(exc)
            self.save()
            raise
        if self.state.status == "finished":
            self.state.finished = utc_now()
        self.save()
        return self.state

    def round(self) -> None:
        """One round: every unfinished stage of the pending round, each followed by a checkpoint."""
        if self.memory.pending is None:
            self.memory.pending = RoundRecord(round=self.state.round + 1)
        pending = self.memory.pending
        for stage in STAGES:
            if stage in pending.done:
                continue
            getattr(self, f"stage_{stage}")(pending)
            pending.done.append(stage)
            self.save()
            if self.ctx.stop.requested():
                return
        self.memory.rounds.append(pending)
        self.memory.pending = None
        self.state.round = pending.round
        self.ctx.record_lessons(self.lessons())
        self.save()

    def stopping(self) -> bool:
        """Check the stop conditions; record the first that holds in the state.

        A pending round beyond `max_rounds` (a resume with a lower `--max-rounds`) is dropped, unless
        its child is already committed: then `round()` only closes it, without a model call.
        """
        st, pending = self.state, self.memory.pending
        reason = self.ctx.stop.requested()
        if reason:
            st.status, st.stop_reason = "stopped", reason
        elif pending is not None and pending.round > self.settings.max_rounds and "commit" not in pending.done:
            st.status, st.stop_reason = "finished", "max_rounds"
            self.memory.pending = None
        elif pending is None and st.round >= self.settings.max_rounds:
            st.status, st.stop_reason = "finished", "max_rounds"
        elif pending is None and st.stale_rounds >= self.settings.patience:
            st.status, st.stop_reason = "finished", "patience"
        return st.status != "running"

    def baseline(self) -> None:
        """Evaluate S0 (the base commit's skills) on E; it is candidate r0c0 and the first front member."""
        self.ctx.on_event(EvaluatingBase())
        skills = self.cands.store.skill_set(BASE_ID, self.base_files)
        evaluation = self.ctx.evaluate(BASE_ID, skills, self.memory.eval_case_ids, None)
        self.cands.keep_evaluation(BASE_ID, evaluation)
        c0 = Candidate(BASE_ID, self.state.base, None, 0)
        self.cands.score_candidate(c0, evaluation)
        self.state.candidates.append(c0)
        self.ctx.accept(BASE_ID, c0.commit, skills)
        commits.publish_s0(self.ctx.store, self.state, c0)
        self.cands.update_front()
        self.save()

    def recommend(self) -> None:
        """Decide which member gets the review branch (evolution/decide/confirm.py, evolution/compare/evidence.py),
        once: a resumed end keeps the recorded recommendation."""
        if self.state.recommendation:
            return
        rec = recommend_run(self.cands, self.state, self.split, self.settings)
        self.state.recommendation = rec.to_json()
        if rec.budget_spent:
            # Undecided for want of budget, not for want of a gain: the run ends as a spent budget does (exit 1).
            self.state.status, self.state.stop_reason = "finished", "budget"
        self.ctx.on_event(Recommended(rec.member, rec.status, rec.words()))
        self.save()

    def seal(self) -> None:
        """Score the sealed test set once, for S0, every front member and the recommended member, at
        the end of the run.

        Never used for a decision: the front, the recommendation and the review branch are already
        fixed. A member already scored (a resumed end) is not scored again.
        """
        if not self.split.test:
            return
        best = self.state.best()
        members = [self.state.candidate(BASE_ID), *self.state.front_candidates()]
        for cand in members + ([best] if best is not None and best not in members else []):
            if "test" in cand.sets:
                continue
            self.ctx.on_event(SealedScoring(cand.id, len(self.split.test)))
            ev = self.ctx.evaluate(
                f"{cand.id}-test", self.cands.store.skill_set(cand.id, self.cands.store.files(cand.id)),
                list(self.split.test), None,
            )
            self.cands.keep_evaluation(f"{cand.id}-test", ev)
            excluded = self.cands.excluded()
            cand.sets["test"] = score(ev.results, [c for c in self.split.test if c not in excluded]).to_json()
            if cand.id != BASE_ID:
                commits.add_metrics_note(self.ctx.store, self.state, cand)
            self.save()

    # --- stages ------------------------------------------------------------------------------------

    def stage_parents(self, r: RoundRecord) -> None:
        """Choose the parent round-robin over the front."""
        r.parent = self.ctx.selector.choose(
            [self.cands.point(c) for c in self.state.front_candidates()], self.memory.picks
        )
        self.memory.picks[r.parent] = self.memory.picks.get(r.parent, 0) + 1
        self.ctx.on_event(RoundParent(r.round, r.parent))

    def stage_diagnose(self, r: RoundRecord) -> None:
        """Split the parent's failures into seeded batches; D diagnosers, each given the policy and past
        changes retrieved for its batch, propose changes concurrently."""
        diagnosed = set(self.split.diagnosis) - self.cands.excluded()
        failing = {cid: rec for cid, rec in self.cands.store.evaluation(r.parent).failing().items() if cid in diagnosed}
        s = self.settings
        if s.cost["enabled"] and len(failing) <= s.cost["max_failures"]:
            self._condense(r, diagnosed, len(failing))
            return
        r.batches = make_batches(list(failing), s.batch_size, s.diagnosers, s.seed, r.round)
        if not r.batches:
            r.note = "the parent fails no case"
            return
        # Said before any model call: with fewer distinct batches than q no change can pass the vote.
        r.batching = batching_note(len(failing), r.batches, s.batch_size, s.diagnosers, s.vote_threshold)
        self.ctx.on_event(RoundBatches(r.round, r.batching))
        failures = [
            Failure(self.ctx.cases[cid], rec["output"], rec["reason"], rec["skills_used"], rec.get("trajectory", []))
            for cid, rec in failing.items()
        ]
        index = self.ctx.retriever(self.state.candidate(r.parent).commit)
        results = diagnose(
            self.ctx.client, self.cands.store.parent_skills(r), failures, r.batches, round_no=r.round, index=index,
            tried=tried_section(self.lessons()), amendments=self.ctx.amendments,
        )
        if self.ctx.case_values is not None:
            dropped = guard_proposals(results, self.ctx.case_values)
            if dropped:
                # One line, not one per proposal: each is in state.json and `frames review`.
                self.ctx.on_event(ProposalsDropped(r.round, len(dropped), _cut(dropped[0], 160)))
        if all(d.error for d in results):
            # One failed diagnoser is noise the vote absorbs; all of them failing is a provider
            # that refuses us (credentials, model name), and more rounds would only repeat it.
            raise ModelError(f"every diagnoser call of round {r.round} failed, first with: {results[0].error}")
        r.diagnoses = [d.to_json() for d in results]
        self._take_disputes(r, results)

    def _condense(self, r: RoundRecord, diagnosed: set[str], failures: int) -> None:
        """A cost-directed round (evolution/propose/cost.py): blueprints that condense the parent's costliest
        skills, measured on its diagnosis-set results; no diagnoser is called and nothing is voted."""
        r.kind = "cost"
        results = [rec for rec in self.cands.store.evaluation(r.parent).results if rec["case_id"] in diagnosed]
        costs = skill_costs(results, self.cands.store.parent_skills(r))
        r.blueprints = [b.to_json() for b in condense_blueprints(costs, int(self.settings.cost["skills"]))]
        r.costs = [c.to_json() for c in costs]
        few = (
            "no diagnosis-set case" if failures == 0 else f"{failures} diagnosis-set case{'s' if failures > 1 else ''}"
        )
        r.note = (
            f"cost-directed: the parent fails {few}" if r.blueprints else f"the parent fails {few} and loads no skill"
        )
        self.ctx.on_event(CostRound(r.round, r.note, tuple(c.line() for c in costs[: len(r.blueprints)])))

    def stage_vote(self, r: RoundRecord) -> None:
        """Keep skills that at least q distinct diagnosers proposed; merge each into one blueprint."""
        if r.kind == "cost":
            return  # its blueprints come from the measured costs, not from votes
        # A disputed case is never turned into a rule, whichever diagnoser cites it.
        excluded = self.cands.excluded()
        proposals = []
        for d in r.diagnoses:
            for p in DiagnoserResult.from_json(d).proposals:
                cited = tuple(c for c in p.case_ids if c not in excluded)
                if cited:
                    proposals.append(dataclasses.replace(p, case_ids=cited))
        result = vote(
            proposals, self.settings.vote_threshold, set(self.cands.store.parent_skills(r)),
            self.settings.merge_threshold,
        )
        r.blueprints = [b.to_json() for b in result.blueprints]
        r.rejected = result.rejected
        if r.diagnoses and not r.blueprints:
            r.note = "no skill reached the vote threshold"

    def stage_rewrite(self, r: RoundRecord) -> None:
        """Rewrite each blueprint skill (guarded; retried with the errors; dropped when it never validates)."""
        blueprints = [Blueprint.from_json(b) for b in r.blueprints]
        if not blueprints:
            return
        n = self.settings.anchor_cases
        anchors = {
            b.skill: [self.ctx.cases[c] for c in self.ctx.anchors(b.skill, n) if c in self.ctx.cases]
            for b in blueprints
        }
        limits = RewriteLimits(
            self.settings.max_body_lines, self.settings.rewrite_retries, self.settings.duplicate_threshold,
            self.ctx.policy_sentences,
        )
        priors = {b.skill: self.ctx.priors(b.skill) for b in blueprints}
        guard = RewriteGuard(self.ctx.policy_keeper, self.ctx.case_values)
        known = [*self.ctx.earlier_lessons, *self.lessons()]
        left_out = {b.skill: left_out_notes(known, b.skill, self.state.run_id) for b in blueprints}
        outcomes = rewrite(
            self.ctx.client, self.cands.store.parent_skills(r), blueprints, anchors, limits, round_no=r.round,
            priors=priors, guard=guard, left_out=left_out,
        )
        r.outcomes = [o.to_json() for o in outcomes]
        if not any(o.accepted for o in outcomes):
            # The last error of each dropped skill, so the console says why, not only the report.
            why = [f"{o.skill}: {_cut(one_line(o.errors[-1][0]), 140)}" for o in outcomes if o.errors and o.errors[-1]]
            more = f"; and {len(why) - 2} more" if len(why) > 2 else ""
            r.note = "every rewrite was dropped by the validator" + (f": {'; '.join(why[:2])}{more}" if why else "")

    def stage_evaluate(self, r: RoundRecord) -> None:
        """Build the child (parent files + accepted rewrites) and evaluate it on E, blind."""
        changes = self.cands.store.child_changes(r)
        if not changes:
            # Name the skills whose accepted rewrite came back as it was (report.md lists them as
            # "Rewritten", so the note must say the text did not change).
            same = [o["skill"] for o in r.outcomes if o.get("skill_text") is not None]
            detail = f": the rewriter returned {', '.join(same)} exactly as they were" if same else ""
            r.note = r.note or f"the rewrites changed nothing{detail}"
            return
        files = {**self.cands.store.files(r.parent), **changes}
        twin = self.cands.twin(files)
        if twin:
            r.note = f"the child is identical to {twin}"
            return
        cid = candidate_id(r.round, 1)
        self.ctx.on_event(EvaluatingChild(r.round, cid, tuple(skill_names(changes))))
        self.cands.evaluate_child(cid, files, r.parent)
        r.child = cid

    def stage_gate(self, r: RoundRecord) -> None:
        """Gate the child against S0 case by case, per category (never against the parent)."""
        if r.child is None:
            return
        verdict, r.gate = self.cands.gate_child(
            r.child, lambda: {**self.cands.store.files(r.parent), **self.cands.store.child_changes(r)}, r.parent
        )
        self.ctx.on_event(Gated(r.round, r.child, verdict.passed, verdict.summary()))

    def stage_commit(self, r: RoundRecord) -> None:
        """Commit the child under the run's refs; an accepted child joins the pool and maybe the front."""
        if r.child is None:
            self.state.stale_rounds += 1
            self.ctx.on_event(NoChild(r.round, r.note or "nothing to evaluate"))
            return
        fresh = self.cands.commit_child(
            r, Candidate(r.child, "", r.parent, r.round), self.cands.store.child_changes(r), r.gate
        )
        self.state.stale_rounds = 0 if fresh else self.state.stale_rounds + 1

    def stage_attribute(self, r: RoundRecord) -> None:
        """When the child failed the gate (or is off the front) and changed several skills: attribute
        its broken cases to the rewrites they loaded and make the sub-child without the implicated
        ones, evaluated, gated and committed like any child; at most `attribution_steps` per round,
        each step analysing the child the previous one made. A checkpoint follows every step."""
        while len(r.attribution) < self.settings.attribution_steps:
            analysed = r.attribution[-1]["sub_child"] if r.attribution else r.child
            if not analysed:
                return
            found = self.cands.attribution(r, self.state.candidate(analysed))
            if not found:
                return
            step = {**found.to_json(), "note": found.note(), "sub_child": None}
            self.ctx.on_event(AttributionStep(r.round, step["note"]))
            if found.sub_child_possible:
                step["sub_child"], fresh = self.cands.make_sub_child(r, found)
                if fresh:
                    self.state.stale_rounds = 0
            cand = self.state.candidate(analysed)
            cand.attribution = dict(step)
            commits.add_metrics_note(self.ctx.store, self.state, cand)
            r.attribution.append(step)
            self.save()

    # --- helpers -----------------------------------------------------------------------------------

    def save(self) -> None:
        """Record the spend so far in the run state and write the checkpoint atomically."""
        self.state.spend_tokens, self.state.spend_usd = _spend(self.ctx.client.ledger)
        self.ctx.checkpointer.save(self.state, self.memory)

    def lessons(self) -> list[Lesson]:
        """What this run tried and saw fail, round by round (finished rounds only)."""
        passed = [c.id for c in self.state.candidates if c.gate_passed]
        return [lesson for r in self.memory.rounds for lesson in round_lessons(self.state.run_id, r, passed)]

    def _take_disputes(self, r: RoundRecord, results: list[DiagnoserResult]) -> None:
        """Record the round's new label disputes; each disputed case leaves the gate and the front at
        once (every candidate is scored again without it and the front recomputed)."""
        new = {}
        for d in results:
            for dispute in d.disputes:
                cid = dispute["case_id"]
                if cid in self.memory.disputes or cid in new:
                    continue
                if self.ctx.cases[cid].label == "confirmed":
                    self.ctx.on_event(LabelConfirmed(r.round, d.diagnoser, cid))
                    continue
                new[cid] = {"run": self.state.run_id, "round": r.round, "diagnoser": d.diagnoser, **dispute}
                self.ctx.on_event(LabelDisputed(r.round, cid, d.diagnoser))
        if not new:
            return
        self.memory.disputes.update(new)
        self.ctx.record_disputes(dict(self.memory.disputes))
        for cand in self.state.candidates:
            if cand.evaluated:
                self.cands.score_candidate(cand, self.cands.store.evaluation(cand.id))
        self.cands.update_front()


def _spend(ledger: Any) -> tuple[int, float | None]:
    """(tokens, USD) spent so far by the run, from the client's ledger; USD None when no call was priced."""
    priced = any(t.calls > t.unpriced_calls for t in ledger.roles.values())
    return ledger.total_tokens, (ledger.total_usd if priced else None)


def _cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters at a word, with an ellipsis when cut."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"
