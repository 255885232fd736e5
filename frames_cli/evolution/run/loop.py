"""The evolution loop (DESIGN §4): S0, then rounds of parents → diagnose → vote → rewrite → evaluate → gate →
commit → attribute, each stage a module of evolution/round/stages/ whose value the round's record keeps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from frames_cli.errors import BudgetExceeded, FramesError
from frames_cli.llm.transport.batch import BatchPending
from frames_cli.evolution.round import commit as commits
from frames_cli.evolution.round.candidate_store import CandidateStore
from frames_cli.evolution.round.evaluations import EvaluationLog
from frames_cli.evolution.round.outcomes import RunOutcomes
from frames_cli.evolution.round.scores import score_candidate
from frames_cli.evolution.round.stages.attribute import attribution_step
from frames_cli.evolution.round.stages.commit import commit_child, update_front
from frames_cli.evolution.round.stages.diagnose import diagnose_round
from frames_cli.evolution.round.stages.evaluate import make_child
from frames_cli.evolution.round.stages.gate import GatedChild, run_gate
from frames_cli.evolution.round.stages.parents import choose_parent
from frames_cli.evolution.round.stages.rewrite import rewrite_round
from frames_cli.evolution.round.stages.vote import vote_round
from frames_cli.evolution.round.record import LoopMemory, RoundRecord, round_lessons
from frames_cli.evolution.state.disputes import excluded_ids
from frames_cli.evolution.state.events import EvaluatingBase, Recommended, SealedScoring
from frames_cli.evolution.state.round_events import Gated, NoChild, RoundParent
from frames_cli.evolution.decide.confirm import recommend_run
from frames_cli.evolution.propose.lessons import Lesson
from frames_cli.evolution.state.records import Candidate, RunState, utc_now
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.evolution.compare.scoring import score
from frames_cli.evolution.state.splits import Split

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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
        self.store = CandidateStore(ctx.store, state, ctx.evals_dir, base_files)
        self.log = EvaluationLog(ctx.evals_dir, self.store)
        self.child_gate = run_gate(ctx, self.log, settings)

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
        steps: dict[str, Callable[[RoundRecord], None]] = {
            "parents": self.parents, "diagnose": self.diagnose, "vote": self.vote, "rewrite": self.rewrite,
            "evaluate": self.evaluate, "gate": self.gate, "commit": self.commit, "attribute": self.attribute,
        }
        for stage in STAGES:
            if stage in pending.done:
                continue
            steps[stage](pending)
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
        skills = self.store.skill_set(BASE_ID, self.base_files)
        evaluation = self.ctx.evaluate(BASE_ID, skills, self.memory.eval_case_ids, None)
        self.log.keep(BASE_ID, evaluation)
        c0 = Candidate(BASE_ID, self.state.base, None, 0)
        score_candidate(c0, evaluation, self.outcomes(), self.settings.samples)
        self.state.candidates.append(c0)
        self.ctx.accept(BASE_ID, c0.commit, skills)
        commits.publish_s0(self.ctx.store, self.state, c0)
        update_front(self.ctx.store, self.state)
        self.save()

    def recommend(self) -> None:
        """Decide which member gets the review branch (evolution/decide/confirm.py, evolution/compare/evidence.py),
        once: a resumed end keeps the recorded recommendation."""
        if self.state.recommendation:
            return
        rec = recommend_run(self.log, self.ctx, self.excluded(), self.state, self.split, self.settings)
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
                f"{cand.id}-test", self.store.skill_set(cand.id, self.store.files(cand.id)), list(self.split.test), None
            )
            self.log.keep(f"{cand.id}-test", ev)
            excluded = self.excluded()
            cand.sets["test"] = score(ev.results, [c for c in self.split.test if c not in excluded]).to_json()
            if cand.id != BASE_ID:
                commits.add_metrics_note(self.ctx.store, self.state, cand)
            self.save()

    # --- the stages: each calls its module and keeps the value in the round's record ----------------

    def parents(self, r: RoundRecord) -> None:
        """Choose the parent round-robin over the front."""
        r.parent = choose_parent(self.ctx.selector, self.state, self.memory.picks)
        self.memory.picks[r.parent] = self.memory.picks.get(r.parent, 0) + 1
        self.ctx.on_event(RoundParent(r.round, r.parent))

    def diagnose(self, r: RoundRecord) -> None:
        """Diagnose the parent's failures (or make a cost-directed round); take the new label disputes."""
        found = diagnose_round(
            self.ctx, self.store, self.outcomes(), self.settings, self.state, r.round, r.parent, self.lessons(),
            self.memory.disputes,
        )
        r.kind, r.batches, r.batching = found.kind, [list(b) for b in found.batches], found.batching
        r.note = found.note or r.note
        if found.kind == "cost":
            r.blueprints = found.blueprints
        if found.results:
            r.diagnoses = found.results
        if found.disputes:
            self._take_disputes(found.disputes)

    def vote(self, r: RoundRecord) -> None:
        """Keep skills that at least q distinct diagnosers proposed; merge each into one blueprint."""
        if r.kind == "cost":
            return  # its blueprints come from the measured costs, not from votes
        result = vote_round(
            r.diagnoses, self.excluded(), self.store.parent_skills(r), self.settings.vote_threshold,
            self.settings.merge_threshold,
        )
        r.blueprints = result.blueprints
        r.rejected = result.rejected
        r.note = result.note or r.note

    def rewrite(self, r: RoundRecord) -> None:
        """Rewrite each blueprint skill (guarded; retried with the errors; dropped when it never validates)."""
        done = rewrite_round(
            self.ctx, self.settings, self.store.parent_skills(r), r.blueprints, r.round, self.lessons(),
            self.state.run_id,
        )
        if done.outcomes:
            r.outcomes = done.outcomes
        r.note = done.note or r.note

    def evaluate(self, r: RoundRecord) -> None:
        """Build the child (parent files + accepted rewrites), evaluate it on E, blind, and keep its evaluation."""
        child = make_child(
            self.ctx, self.store, self.outcomes(), self.settings, self.state, r.round, r.parent,
            self.store.child_changes(r), r.outcomes, r.note,
        )
        r.note = child.note
        if child.id is not None and child.evaluation is not None:
            self.log.keep(child.id, child.evaluation)
            r.child = child.id

    def gate(self, r: RoundRecord) -> None:
        """Gate the child against S0 case by case, per category (never against the parent)."""
        if r.child is None:
            return

        def files() -> dict[str, bytes]:
            return {**self.store.files(r.parent), **self.store.child_changes(r)}

        r.gate = self.child_gate.judge(GatedChild(self.outcomes(), r.child, files, r.parent))
        self.ctx.on_event(Gated(r.round, r.child, r.gate.verdict.passed, r.gate.verdict.summary()))

    def commit(self, r: RoundRecord) -> None:
        """Commit the child under the run's refs; an accepted child joins the pool and maybe the front."""
        if r.child is None:
            self.state.stale_rounds += 1
            self.ctx.on_event(NoChild(r.round, r.note or "nothing to evaluate"))
            return
        fresh = commit_child(
            self.ctx, self.outcomes(), self.settings, self.state, r, Candidate(r.child, "", r.parent, r.round),
            self.store.child_changes(r), r.gate,
        )
        self.state.stale_rounds = 0 if fresh else self.state.stale_rounds + 1

    def attribute(self, r: RoundRecord) -> None:
        """When the child failed the gate (or is off the front) and changed several skills: attribute
        its broken cases to the rewrites they loaded and make the sub-child without the implicated
        ones, evaluated, gated and committed like any child; at most `attribution_steps` per round,
        each step analysing the child the previous one made. A checkpoint follows every step."""
        while len(r.attribution) < self.settings.attribution_steps:
            analysed = r.attribution[-1].sub_child if r.attribution else r.child
            if not analysed:
                return
            step = attribution_step(
                self.ctx, self.outcomes(), self.log, self.child_gate, self.settings, self.state, r, analysed
            )
            if step is None:
                return
            if step.fresh:
                self.state.stale_rounds = 0
            r.attribution.append(step.record)
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

    def excluded(self) -> set[str]:
        """Cases that count in no set now: disputed and not confirmed by a person, or `label: disputed`."""
        return excluded_ids(self.ctx.cases, self.memory.disputes)

    def outcomes(self) -> RunOutcomes:
        """The candidates' outcomes as the run's judgements read them now (disputed cases left out)."""
        return RunOutcomes(
            self.store, self.split, self.ctx.cases, frozenset(self.excluded()), tuple(self.memory.eval_case_ids),
            self.settings.attribution_steps,
        )

    def _take_disputes(self, new: Mapping[str, dict[str, Any]]) -> None:
        """Record the round's new label disputes; each disputed case leaves the gate and the front at
        once (every candidate is scored again without it and the front recomputed)."""
        self.memory.disputes.update(new)
        self.ctx.record_disputes(dict(self.memory.disputes))
        view = self.outcomes()
        for cand in self.state.candidates:
            if cand.evaluated:
                score_candidate(cand, self.store.evaluation(cand.id), view, self.settings.samples)
        update_front(self.ctx.store, self.state)


def _spend(ledger: Any) -> tuple[int, float | None]:
    """(tokens, USD) spent so far by the run, from the client's ledger; USD None when no call was priced."""
    priced = any(t.calls > t.unpriced_calls for t in ledger.roles.values())
    return ledger.total_tokens, (ledger.total_usd if priced else None)

