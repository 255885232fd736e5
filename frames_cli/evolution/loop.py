"""The evolution loop (DESIGN §4): S0, then rounds of parents → diagnose → vote → rewrite → evaluate → gate → commit."""

from __future__ import annotations

import dataclasses
import json
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from frames_cli.errors import BudgetExceeded, FramesError, ModelError
from frames_cli.evolution import commit as commits
from frames_cli.evolution.attribution import Attribution, attribute, catalog_changes, dominated_categories, loaded_skills
from frames_cli.evolution.checkpoint import Checkpointer, LoopMemory, RoundRecord
from frames_cli.evolution.consensus import Blueprint, resolve_threshold, vote
from frames_cli.evolution.diagnose import DiagnoserResult, Failure, batching_note, diagnose, make_batches
from frames_cli.evolution.cost import condense_blueprints, skill_costs
from frames_cli.evolution.disputes import excluded_ids
from frames_cli.evolution.lessons import Lesson, left_out_notes, round_lessons, tried_section
from frames_cli.evolution.early import EarlyRejection, certain_rejection
from frames_cli.evolution.front import FrontPoint, pareto_front
from frames_cli.evolution.gate import Gate, GateVerdict, Outcomes, outcomes_from_results
from frames_cli.evolution.guards import CaseValues, PolicyKeeper, RewriteGuard, guard_proposals
from frames_cli.evolution.records import BASE_ID, Candidate, FailureNote, RunState, candidate_id, utc_now
from frames_cli.evolution.rewrite import RewriteLimits, RewriteOutcome, plan_changes, rewrite
from frames_cli.evolution.scoring import score
from frames_cli.evolution.selection import RoundRobinSelector, Selector
from frames_cli.evolution.splits import Split
from frames_cli.workspace.atomic import atomic_write_json

if TYPE_CHECKING:
    from frames_cli.evolution.retrieval import PassageIndex
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill import SkillSet
    from frames_cli.gitstore.store import GitStore
    from frames_cli.llm.client import ModelClient
    from frames_cli.workspace.config import FramesConfig

#: The stages of one round, in the order the method runs them; each ends with a checkpoint.
#: `attribute` makes the sub-children of a child that failed the gate (evolution/attribution.py).
STAGES = ("parents", "diagnose", "vote", "rewrite", "evaluate", "gate", "commit", "attribute")


@dataclass(frozen=True)
class Settings:
    """The evolution settings a run is fixed to (from `evolution.*` and `eval.samples` in frames.yaml).

    `vote_threshold` is q as a count of diagnosers (see consensus.resolve_threshold); `retrieval` is
    `evolution.retrieval` as a dict ({} in runs started before it existed: they resume without
    retrieval); `gate`, `gate_alpha` and `early_rejection` take the defaults of frames.yaml in runs
    started before they existed; `split` is `evolution.split` as a dict (used once, when a new run
    divides its cases); `merge_threshold` is None and `duplicate_threshold` 1.0 in runs started
    before merging existed (they resume as they began: identical wording merged only, the guard
    nearly off); `guards` is `evolution.guards` likewise ({}: no guard); `attribution_steps` is 0
    (no sub-child) in runs started before attribution existed; the rest mean what their config fields say.
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
    attribution_steps: int = 0
    cost: dict = dataclasses.field(default_factory=dict)

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
            attribution_steps=ev.attribution_steps,
            cost=dataclasses.asdict(ev.cost),
        )

    def to_json(self) -> dict:
        """Every field as JSON-ready data (nested dataclasses become dicts)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, obj: dict) -> Settings:
        """The settings a run was started with (a resumed run keeps them, whatever frames.yaml says now)."""
        return cls(**obj)


class StopRequest:
    """Asks the loop to stop after the current step: set by SIGINT/SIGTERM, or a stop file.

    Signals only set a flag (the handler does no I/O), so a model call or a git write in progress
    finishes and the state is saved before the run exits.
    """

    def __init__(self, stop_file: Path | None = None):
        self.stop_file = stop_file
        self.reason: str | None = None

    def install(self) -> Callable[[], None]:
        """Route SIGINT and SIGTERM to this request (main thread only); returns a function that
        puts the previous handlers back. A second signal goes to the previous handler at once."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

        def restore() -> None:
            for sig, old in previous.items():
                signal.signal(sig, old)

        def handler(signum: int, _frame: Any) -> None:
            if self.reason is not None:
                # A second signal means "now": hand it to the previous handler (Ctrl-C twice aborts).
                restore()
                signal.raise_signal(signum)
                return
            self.reason = signal.Signals(signum).name

        for sig in previous:
            signal.signal(sig, handler)
        return restore

    def requested(self) -> str | None:
        """The reason to stop, or None. A stop file is consumed when seen, so it stops one run."""
        if self.reason is None and self.stop_file is not None and self.stop_file.exists():
            self.stop_file.unlink(missing_ok=True)
            self.reason = "stop file"
        return self.reason


@dataclass
class RunContext:
    """What one run works with. Everything that reads or writes outside memory is here.

    Attributes:
        store: git plumbing (candidate commits, refs, notes).
        client: model calls for diagnoser and rewriter (cache, ledger, audit).
        evaluate: (candidate id, skills, case ids, early rejection or None) → its evaluation on those
            cases (see `Evaluation`); with an `EarlyRejection` it may stop once the gate must reject.
        cases: case id → Case, every case of the run's sets.
        anchors: (skill name, n) → ids of anchor cases from the regression pool.
        priors: skill name → reviewer advice attached to it (`priors.yaml`), shown to its rewriter.
        retriever: parent commit sha → the index diagnosers retrieve context from (policy passages
            and past skill changes, evolution/retrieval.py), or None when retrieval is off.
        accept: called with (candidate id, commit sha, skills) when a candidate is accepted (S0, or
            a child that passed the gate), so the regression pool learns from it.
        checkpointer: atomic state saves in the run folder.
        evals_dir: where per-case results of each candidate are kept.
        stop: the stop request.
        gate, selector: the strategies.
        record_disputes: called with the run's disputes (case id → record) whenever it learns one,
            so later runs and `frames status` know them.
        record_lessons: called with the run's lessons (evolution/lessons.py) after every round.
        earlier_lessons: the lessons of earlier runs (`.frames/failed-changes.json`); their left-out
            rewrites are shown to the rewriter of the same skill.
        case_values: the case-value index of evolution/guards.py, or None when that guard is off.
        policy_keeper: the policy sentences of S0's skills, or None when that guard is off.
        on_event: progress messages for people (one line each).
        amendments: what diagnosers are told about policy lines that changed under the base's
            skills since they were written ("" when none; workspace/amendments.diagnoser_notice).
    """

    store: GitStore
    client: ModelClient
    evaluate: Callable[[str, SkillSet, Sequence[str], "EarlyRejection | None"], "Evaluation"]
    cases: Mapping[str, Case]
    anchors: Callable[[str, int], list[str]]
    accept: Callable[[str, str, SkillSet], None]
    checkpointer: Checkpointer
    evals_dir: Path
    stop: StopRequest
    gate: Gate
    selector: Selector = RoundRobinSelector()
    priors: Callable[[str], list[str]] = lambda _skill: []
    retriever: Callable[[str], "PassageIndex | None"] = lambda _sha: None
    record_disputes: Callable[[dict[str, dict]], None] = lambda _d: None
    record_lessons: Callable[[list[Lesson]], None] = lambda _l: None
    earlier_lessons: Sequence[Lesson] = ()
    case_values: CaseValues | None = None
    policy_keeper: PolicyKeeper | None = None
    on_event: Callable[[str], None] = lambda _msg: None
    amendments: str = ""


@dataclass
class Evaluation:
    """A candidate's results on the cases it was evaluated on, and per-case records.

    Attributes:
        pass_rate: overall, case-weighted, 0..1, over every evaluated case (the loop scores each set
            from `results`: evolution/scoring.score).
        per_category: category → pass rate, over every evaluated case.
        mean_tokens: prompt + completion tokens per case.
        cost_usd: None when a price is unknown.
        results: one dict per case and sample: case_id, category, sample, passed, reason, output,
            skills_used, trajectory (the agent's steps), tokens (prompt + completion), lost (its
            answer never arrived: neither a pass nor a failure; absent in older runs).
        early_stop: None when every case was evaluated; else the child was rejected early:
            {"evaluated": cases run, "skipped": [ids not run], "reason": why the gate was certain}.
            The metrics are then over the evaluated cases only.
    """

    pass_rate: float
    per_category: dict[str, float]
    mean_tokens: float
    cost_usd: float | None
    results: list[dict]
    early_stop: dict | None = None

    def failing(self) -> dict[str, dict]:
        """case id → its first failing record (a case fails when any sample fails; a lost result is no failure)."""
        out: dict[str, dict] = {}
        for r in self.results:
            if not r["passed"] and not r.get("lost"):
                out.setdefault(r["case_id"], r)
        return out

    def to_json(self) -> dict:
        """Every field as JSON-ready data (nested dataclasses become dicts)."""
        return dataclasses.asdict(self)


class EvolutionRun:
    """Runs (or resumes) one evolve run to its end; `run()` and `round()` are the method in a few lines.

    Args:
        ctx: the run's collaborators.
        state: the run's record (new, or loaded to resume).
        memory: the loop's own progress (new, or from `state.checkpoint`).
        settings: the evolution settings (`Settings.from_json(memory.settings)` on resume).
        base_files: `skills/` files of the base commit.
    """

    def __init__(self, ctx: RunContext, state: RunState, memory: LoopMemory, settings: Settings, base_files: dict[str, bytes]):
        self.ctx = ctx
        self.state = state
        self.memory = memory
        self.settings = settings
        self.base_files = base_files
        self.split = Split.from_json(memory.split) if memory.split else Split.single(memory.eval_case_ids)
        self._skills: dict[str, SkillSet] = {}

    # --- the method ------------------------------------------------------------------------------

    def run(self) -> RunState:
        """Evaluate S0 (unless done), then run rounds until a stop condition; returns the state.

        Stop conditions: `max_rounds` rounds, `patience` rounds without a new front member, the
        budget (BudgetExceeded from the client: status "finished"), a stop file or SIGINT/SIGTERM
        (status "stopped": the next `frames evolve` resumes). The state is saved after every stage.

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
                self.seal()
        except BudgetExceeded:
            self.state.status, self.state.stop_reason = "finished", "budget"
            self.memory.pending = None
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
        self.ctx.on_event("evaluating S0 (the base commit's skills)")
        skills = self._skill_set(BASE_ID, self.base_files)
        evaluation = self.ctx.evaluate(BASE_ID, skills, self.memory.eval_case_ids, None)
        self._keep_evaluation(BASE_ID, evaluation)
        c0 = Candidate(BASE_ID, self.state.base, None, 0)
        self._score(c0, evaluation)
        self.state.candidates.append(c0)
        self.ctx.accept(BASE_ID, c0.commit, skills)
        commits.publish_s0(self.ctx.store, self.state, c0)
        self._update_front()
        self.save()

    def seal(self) -> None:
        """Score the sealed test set once, for S0 and every front member, at the end of the run.

        Never used for a decision: the front, the best member and the review branch are already
        fixed by the selection set. A member already scored (a resumed end) is not scored again.
        """
        if not self.split.test:
            return
        for cand in [self.state.candidate(BASE_ID), *self.state.front_candidates()]:
            if "test" in cand.sets:
                continue
            self.ctx.on_event(f"scoring {cand.id} on the sealed test set ({len(self.split.test)} cases)")
            ev = self.ctx.evaluate(f"{cand.id}-test", self._skill_set(cand.id, self._files(cand.id)), list(self.split.test), None)
            self._keep_evaluation(f"{cand.id}-test", ev)
            excluded = self._excluded()
            cand.sets["test"] = score(ev.results, [c for c in self.split.test if c not in excluded]).to_json()
            if cand.id != BASE_ID:
                commits.add_metrics_note(self.ctx.store, self.state, cand)
            self.save()

    # --- stages ------------------------------------------------------------------------------------

    def stage_parents(self, r: RoundRecord) -> None:
        """Choose the parent round-robin over the front."""
        r.parent = self.ctx.selector.choose([self._point(c) for c in self.state.front_candidates()], self.memory.picks)
        self.memory.picks[r.parent] = self.memory.picks.get(r.parent, 0) + 1
        self.ctx.on_event(f"round {r.round}: parent {r.parent}")

    def stage_diagnose(self, r: RoundRecord) -> None:
        """Split the parent's failures into seeded batches; D diagnosers, each given the policy and past
        changes retrieved for its batch, propose changes concurrently."""
        diagnosed = set(self.split.diagnosis) - self._excluded()
        failing = {cid: rec for cid, rec in self._evaluation(r.parent).failing().items() if cid in diagnosed}
        s = self.settings
        if s.cost.get("enabled") and len(failing) <= s.cost.get("max_failures", 0):
            self._condense(r, diagnosed, len(failing))
            return
        r.batches = make_batches(list(failing), s.batch_size, s.diagnosers, s.seed, r.round)
        if not r.batches:
            r.note = "the parent fails no case"
            return
        # Said before any model call: with fewer distinct batches than q no change can pass the vote.
        r.batching = batching_note(len(failing), r.batches, s.batch_size, s.diagnosers, s.vote_threshold)
        self.ctx.on_event(f"round {r.round}: batches {r.batching}")
        failures = [
            Failure(self.ctx.cases[cid], rec["output"], rec["reason"], rec["skills_used"], rec.get("trajectory", []))
            for cid, rec in failing.items()
        ]
        index = self.ctx.retriever(self.state.candidate(r.parent).commit)
        results = diagnose(self.ctx.client, self._parent_skills(r), failures, r.batches, round_no=r.round, index=index,
                           tried=tried_section(self.lessons()), amendments=self.ctx.amendments)
        if self.ctx.case_values is not None:
            for line in guard_proposals(results, self.ctx.case_values):
                self.ctx.on_event(f"round {r.round}: dropped {line}")
        if all(d.error for d in results):
            # One failed diagnoser is noise the vote absorbs; all of them failing is a provider
            # that refuses us (credentials, model name), and more rounds would only repeat it.
            raise ModelError(f"every diagnoser call of round {r.round} failed, first with: {results[0].error}")
        r.diagnoses = [d.to_json() for d in results]
        self._take_disputes(r, results)

    def _condense(self, r: RoundRecord, diagnosed: set[str], failures: int) -> None:
        """A cost-directed round (evolution/cost.py): blueprints that condense the parent's costliest
        skills, measured on its diagnosis-set results; no diagnoser is called and nothing is voted."""
        r.kind = "cost"
        results = [rec for rec in self._evaluation(r.parent).results if rec["case_id"] in diagnosed]
        costs = skill_costs(results, self._parent_skills(r))
        r.blueprints = [b.to_json() for b in condense_blueprints(costs, int(self.settings.cost.get("skills", 1)))]
        r.costs = [c.to_json() for c in costs]
        few = "no diagnosis-set case" if failures == 0 else f"{failures} diagnosis-set case{'s' if failures > 1 else ''}"
        r.note = f"cost-directed: the parent fails {few}" if r.blueprints else f"the parent fails {few} and loads no skill"
        self.ctx.on_event(f"round {r.round}: {r.note}; condensing {', '.join(c.line() for c in costs[: len(r.blueprints)]) or 'nothing'}")

    def stage_vote(self, r: RoundRecord) -> None:
        """Keep skills that at least q distinct diagnosers proposed; merge each into one blueprint."""
        if r.kind == "cost":
            return  # its blueprints come from the measured costs, not from votes
        # A disputed case is never turned into a rule, whichever diagnoser cites it.
        excluded = self._excluded()
        proposals = []
        for d in r.diagnoses:
            for p in DiagnoserResult.from_json(d).proposals:
                cited = tuple(c for c in p.case_ids if c not in excluded)
                if cited:
                    proposals.append(dataclasses.replace(p, case_ids=cited))
        result = vote(proposals, self.settings.vote_threshold, set(self._parent_skills(r)), self.settings.merge_threshold)
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
        anchors = {b.skill: [self.ctx.cases[c] for c in self.ctx.anchors(b.skill, n) if c in self.ctx.cases] for b in blueprints}
        limits = RewriteLimits(self.settings.max_body_lines, self.settings.rewrite_retries, self.settings.duplicate_threshold)
        priors = {b.skill: self.ctx.priors(b.skill) for b in blueprints}
        guard = RewriteGuard(self.ctx.policy_keeper, self.ctx.case_values)
        known = [*self.ctx.earlier_lessons, *self.lessons()]
        left_out = {b.skill: left_out_notes(known, b.skill) for b in blueprints}
        outcomes = rewrite(self.ctx.client, self._parent_skills(r), blueprints, anchors, limits, round_no=r.round, priors=priors, guard=guard,
                           left_out=left_out)
        r.outcomes = [o.to_json() for o in outcomes]
        if not any(o.accepted for o in outcomes):
            r.note = "every rewrite was dropped by the validator"

    def stage_evaluate(self, r: RoundRecord) -> None:
        """Build the child (parent files + accepted rewrites) and evaluate it on E, blind."""
        changes = self._changes(r)
        if not changes:
            r.note = r.note or "the rewrites changed nothing"
            return
        files = {**self._files(r.parent), **changes}
        twin = next((c.id for c in self.state.candidates if self._files(c.id) == files), None)
        if twin:
            r.note = f"the child is identical to {twin}"
            return
        cid = candidate_id(r.round, 1)
        self.ctx.on_event(f"round {r.round}: evaluating {cid} (changes {', '.join(_names(changes))})")
        self._evaluate_child(cid, files, r.parent)
        r.child = cid

    def stage_gate(self, r: RoundRecord) -> None:
        """Gate the child against S0 case by case, per category (never against the parent)."""
        if r.child is None:
            return
        verdict, r.gate = self._gate_child(r.child)
        self.ctx.on_event(f"round {r.round}: {r.child} gate {verdict.summary()}")

    def stage_commit(self, r: RoundRecord) -> None:
        """Commit the child under the run's refs; an accepted child joins the pool and maybe the front."""
        if r.child is None:
            self.state.stale_rounds += 1
            self.ctx.on_event(f"round {r.round}: no child ({r.note or 'nothing to evaluate'})")
            return
        fresh = self._commit_child(r, Candidate(r.child, "", r.parent, r.round), self._changes(r), r.gate)
        self.state.stale_rounds = 0 if fresh else self.state.stale_rounds + 1

    def stage_attribute(self, r: RoundRecord) -> None:
        """When the child failed the gate (or is off the front) and changed several skills: attribute
        its broken cases to the rewrites they loaded and make the sub-child without the implicated
        ones, evaluated, gated and committed like any child; at most `attribution_steps` per round,
        each step analysing the child the previous one made. A checkpoint follows every step."""
        while len(r.attribution) < self.settings.attribution_steps:
            analysed = r.attribution[-1]["sub_child"] if r.attribution else r.child
            found = analysed and self._attribute(r, self.state.candidate(analysed))
            if not found:
                return
            step = {**found.to_json(), "note": found.note(), "sub_child": None}
            self.ctx.on_event(f"round {r.round}: attribution {step['note']}")
            if found.sub_child_possible:
                step["sub_child"] = self._make_sub_child(r, found)
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

    def _excluded(self) -> set[str]:
        """Cases that count in no set now: disputed and not confirmed by a person, or `label: disputed`."""
        return excluded_ids(self.ctx.cases, self.memory.disputes)

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
                    self.ctx.on_event(f"round {r.round}: diagnoser {d.diagnoser} disputes the label of {cid}; a person confirmed it: it stays")
                    continue
                new[cid] = {"run": self.state.run_id, "round": r.round, "diagnoser": d.diagnoser, **dispute}
                self.ctx.on_event(f"round {r.round}: {cid} disputed by diagnoser {d.diagnoser} (its expected result contradicts the policy); "
                                  "it leaves the gate and the front until `label: confirmed` or `disputed` is set in its case file")
        if not new:
            return
        self.memory.disputes.update(new)
        self.ctx.record_disputes(dict(self.memory.disputes))
        for cand in self.state.candidates:
            if cand.evaluated:
                self._score(cand, self._evaluation(cand.id))
        self._update_front()

    def _score(self, cand: Candidate, ev: Evaluation) -> None:
        """Score `cand` on the diagnosis and the selection set, disputed cases left out; its headline
        figures (what the gate and the front use) are the selection set's."""
        excluded = self._excluded()
        for name in ("diagnosis", "selection"):
            cand.sets[name] = score(ev.results, [c for c in self.split.ids(name) if c not in excluded]).to_json()
        chosen = cand.sets["selection"]
        cand.pass_rate, cand.per_category = chosen["pass_rate"], dict(chosen["per_category"])
        cand.mean_tokens = ev.mean_tokens if chosen["mean_tokens"] is None else chosen["mean_tokens"]
        cand.cost_usd = ev.cost_usd
        cand.lost = sum(1 for r in ev.results if r.get("lost"))
        selected = set(self.split.selection) - excluded
        cases: dict[str, set[str]] = {}
        for r in ev.results:
            if r["case_id"] in selected and not r.get("lost"):
                cases.setdefault(r["category"], set()).add(r["case_id"])
        cand.case_counts = {cat: len(ids) for cat, ids in sorted(cases.items())}
        cand.samples = self.settings.samples

    def _evaluate_child(self, cid: str, files: Mapping[str, bytes], parent: str) -> None:
        """Evaluate a child (or sub-child) of `parent` made of `files` on E, blind, and keep its
        results; with early rejection on, the evaluation stops once the gate must reject it."""
        self._keep_evaluation(cid, self.ctx.evaluate(cid, self._skill_set(cid, files), self.memory.eval_case_ids, self._early_rejection(parent)))

    def _gate_child(self, cid: str) -> tuple[GateVerdict, dict]:
        """The gate's verdict on an evaluated child against S0 (never against the parent), and its
        record (the verdict's JSON with `lost_left_out`). A case lost on either side is compared on
        neither: its missing answer says nothing of the skills. A child rejected early gets the
        verdict that is certain whatever its unevaluated cases give.

        Raises:
            FramesError: the child was rejected early, yet its results no longer make the rejection certain.
        """
        lost = self._lost_ids(BASE_ID) | self._lost_ids(cid)
        base, evaluation = self._outcomes(BASE_ID, lost), self._evaluation(cid)
        if evaluation.early_stop:
            verdict = certain_rejection(self.ctx.gate, base, self._outcomes(cid, lost), evaluation.early_stop["skipped"])
            if verdict is None:
                raise FramesError(f"{cid} was rejected early, yet its results no longer make the rejection certain")
            verdict = dataclasses.replace(verdict, early_stop=evaluation.early_stop)
        else:
            verdict = self.ctx.gate.check(base, self._outcomes(cid, lost))
        return verdict, {**verdict.to_json(), "lost_left_out": sorted(lost)}

    def _commit_child(self, r: RoundRecord, child: Candidate, changes: Mapping[str, bytes], gate: dict | None) -> bool:
        """Score, explain and commit an evaluated child of the round's parent; an accepted child
        joins the pool and maybe the front. Returns True when it is a new front member."""
        evaluation, parent = self._evaluation(child.id), self.state.candidate(r.parent)
        self._score(child, evaluation)
        self._explain(child, r, changes, gate)
        child.commit = commits.commit_candidate(self.ctx.store, self.state, child, r, dict(changes), self.memory.models)
        child.diff_size = self.ctx.store.diff_stat(parent.commit, child.commit).lines_changed
        self.state.candidates.append(child)
        before = set(self.state.front)
        if child.gate_passed:
            self.ctx.accept(child.id, child.commit, self._skill_set(child.id, {**self._files(parent.id), **changes}))
        self._update_front()
        commits.add_metrics_note(self.ctx.store, self.state, child)
        return child.id in self.state.front and child.id not in before

    def _attribute(self, r: RoundRecord, cand: Candidate) -> Attribution | None:
        """The attribution of `cand` (the round's child or a sub-child), or None when there is nothing
        to attribute: it joined the front, or it changed fewer than two skills."""
        if len(cand.changed_skills) < 2 or cand.id in self.state.front:
            return None
        from frames_cli.formats.case import must_pass_ids

        # Disputed cases count nowhere; a case lost on either side says nothing of the rewrites.
        counted = set(self.memory.eval_case_ids) - self._excluded() - self._lost_ids(r.parent) - self._lost_ids(cand.id)
        must_pass = must_pass_ids(self.ctx.cases.values())
        parent_ev, child_ev = self._evaluation(r.parent), self._evaluation(cand.id)
        parent = outcomes_from_results([x for x in parent_ev.results if x["case_id"] in counted], must_pass)
        child = outcomes_from_results([x for x in child_ev.results if x["case_id"] in counted], must_pass)
        if cand.gate_passed:
            why, categories, mp = "dominated", dominated_categories(self.state.candidate(r.parent).per_category, cand.per_category), []
        else:
            why, categories, mp = "gate", cand.failed_categories(), cand.gate_details.get("must_pass_broken", [])
        catalog = catalog_changes(self._parent_skills(r), self._skill_set(cand.id, self._files(cand.id)), cand.changed_skills)
        return attribute(cand.id, why, categories, parent, child, loaded_skills(child_ev.results), cand.changed_skills, catalog, mp)

    def _make_sub_child(self, r: RoundRecord, found: Attribution) -> str | None:
        """Evaluate, gate and commit the sub-child that keeps only `found.kept` of the round's
        rewrites; returns its id, or None when it equals an existing candidate."""
        changes = {p: d for p, d in self._changes(r).items() if p.split("/")[1] in found.kept}
        files = {**self._files(r.parent), **changes}
        twin = next((c.id for c in self.state.candidates if self._files(c.id) == files), None)
        if twin:
            self.ctx.on_event(f"round {r.round}: the sub-child without {', '.join(found.implicated)} is identical to {twin}")
            return None
        cid = candidate_id(r.round, 1 + sum(c.round == r.round for c in self.state.candidates))
        self.ctx.on_event(f"round {r.round}: evaluating {cid} ({found.child} without {', '.join(found.implicated)})")
        self._evaluate_child(cid, files, r.parent)
        verdict, gate = self._gate_child(cid)
        self.ctx.on_event(f"round {r.round}: {cid} gate {verdict.summary()}")
        sub = Candidate(cid, "", r.parent, r.round, cut_from=found.child, left_out={s: list(c) for s, c in found.implicated.items()})
        if self._commit_child(r, sub, changes, gate):
            self.state.stale_rounds = 0
        return cid

    def _explain(self, child: Candidate, r: RoundRecord, changes: Mapping[str, bytes], gate: dict | None) -> None:
        """Fill in what a reviewer needs: gate verdict, blueprints, motivating failures, drops, votes."""
        child.gate_passed = bool(gate and gate["passed"])
        child.gate_details = gate or {}
        child.changed_skills = _names(changes)
        child.blueprints = [b for b in r.blueprints if b["skill"] in child.changed_skills]
        child.motivating_case_ids = sorted({c for b in child.blueprints for ch in b["changes"] for c in ch["case_ids"]})
        failing = self._evaluation(r.parent).failing()
        child.failures = [
            FailureNote(cid, failing[cid]["category"], failing[cid]["reason"], self.ctx.cases[cid].diagnosis.symptom)
            for cid in child.motivating_case_ids
            if cid in failing
        ]
        child.dropped = {
            o["skill"]: "; ".join(o["errors"][-1]) if o["errors"] else "the rewrite changed nothing"
            for o in r.outcomes
            if o["skill"] not in child.changed_skills and o["skill"] not in child.left_out
        }
        child.dropped_proposals = [line for d in r.diagnoses for line in d["dropped"]]
        child.policy_changes = [c for o in r.outcomes if o["skill"] in child.changed_skills for c in o.get("policy_changes", [])]
        child.votes_needed, child.diagnosers = self.settings.vote_threshold, self.settings.diagnosers

    def _keep_evaluation(self, cid: str, ev: Evaluation) -> None:
        atomic_write_json(self.ctx.evals_dir / f"{cid}.json", ev.to_json())

    def _evaluation(self, cid: str) -> Evaluation:
        return Evaluation(**json.loads((self.ctx.evals_dir / f"{cid}.json").read_text(encoding="utf-8")))

    def _early_rejection(self, parent: str) -> EarlyRejection | None:
        """What lets the child's evaluation stop once the gate must reject it (None when turned off).

        S0's lost cases are left out of its outcomes, as in the gate; the rule leaves out the
        child's lost cases as they come (evolution/early.rejection_rule)."""
        if not self.settings.early_rejection:
            return None
        from frames_cli.formats.case import must_pass_ids

        return EarlyRejection(self.ctx.gate, self._outcomes(BASE_ID, self._lost_ids(BASE_ID)), must_pass_ids(self.ctx.cases.values()),
                              self.settings.tolerance, self._outcomes(parent))

    def _lost_ids(self, cid: str) -> set[str]:
        """Ids of the cases with a lost result in candidate `cid`'s evaluation on E."""
        return {r["case_id"] for r in self._evaluation(cid).results if r.get("lost")}

    def _outcomes(self, cid: str, leave_out: frozenset[str] | set[str] = frozenset()) -> Outcomes:
        """Candidate `cid`'s per-case outcomes on the selection set (what the gate judges), with the
        must-pass marks of the case files; cases in `leave_out` are not compared."""
        from frames_cli.formats.case import must_pass_ids

        gated = set(self.split.selection) - self._excluded() - leave_out
        results = [r for r in self._evaluation(cid).results if r["case_id"] in gated]
        return outcomes_from_results(results, must_pass_ids(self.ctx.cases.values()))

    def _files(self, cid: str) -> dict[str, bytes]:
        """The skills/ files of candidate `cid` (read from its commit)."""
        return self.base_files if cid == BASE_ID else self.ctx.store.read_files(self.state.candidate(cid).commit)

    def _skill_set(self, cid: str, files: Mapping[str, bytes]) -> SkillSet:
        from frames_cli.formats.skill import SkillSet

        if cid not in self._skills:
            # A base skill that does not load is left out of every candidate (the driver says so
            # before the run starts) and stays in their commits as it was.
            self._skills[cid] = SkillSet.load_valid(files)[0]
        return self._skills[cid]

    def _parent_skills(self, r: RoundRecord) -> SkillSet:
        return self._skill_set(r.parent, self._files(r.parent))

    def _changes(self, r: RoundRecord) -> dict[str, bytes]:
        """The child's file changes; only skills named by this round's vote may appear."""
        outcomes = [RewriteOutcome.from_json(o) for o in r.outcomes]
        return plan_changes(self._parent_skills(r), outcomes, {b["skill"] for b in r.blueprints})

    def _point(self, c: Candidate) -> FrontPoint:
        return FrontPoint(c.id, c.pass_rate or 0.0, c.mean_tokens or 0.0, self.state.candidates.index(c))

    def _update_front(self) -> None:
        """Recompute the front over S0 and the accepted children; keep it in creation order
        (the order the round-robin selector cycles) and mirror it under refs/frames/runs/<run>/front/."""
        accepted = [c for c in self.state.candidates if c.parent_id is None or c.gate_passed]
        front = pareto_front([self._point(c) for c in accepted])
        self.state.front = [p.key for p in sorted(front, key=lambda p: p.order)]
        commits.publish_front(self.ctx.store, self.state)


def _names(changes: Mapping[str, bytes]) -> list[str]:
    """Skill names of `skills/<name>/SKILL.md` paths, sorted."""
    return sorted({path.split("/")[1] for path in changes})


def _spend(ledger: Any) -> tuple[int, float | None]:
    """(tokens, USD) spent so far by the run, from the client's ledger; USD None when no call was priced."""
    priced = any(t.calls > t.unpriced_calls for t in ledger.roles.values())
    return ledger.total_tokens, (ledger.total_usd if priced else None)
