"""The candidates of one evolve run: their files, skill sets and stored evaluations, their scores, the
front, and the child pipeline evaluate → gate → commit → attribute that the round's child and its
sub-children go through."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from frames_cli.errors import FramesError
from frames_cli.evolution.compare.early import EarlyRejection, certain_rejection
from frames_cli.evolution.compare.evidence import gain_p_value
from frames_cli.evolution.compare.front import FrontPoint, pareto_front
from frames_cli.evolution.compare.gate import GateVerdict, Outcomes, outcomes_from_results
from frames_cli.evolution.compare.scoring import score
from frames_cli.evolution.compare.sequential import Drawn, drawn_outcomes, sequential_verdict
from frames_cli.evolution.round import commit as commits
from frames_cli.evolution.round.attribution import (
    Attribution,
    attribute,
    catalog_changes,
    dominated_categories,
    loaded_skills,
)
from frames_cli.evolution.round.candidate_store import CandidateStore
from frames_cli.evolution.round.context import Evaluation
from frames_cli.evolution.state.disputes import excluded_ids
from frames_cli.evolution.state.records import Candidate, FailureNote
from frames_cli.evolution.state.round_events import EvaluatingSubChild, Gated, SubChildTwin
from frames_cli.evolution.state.run_ids import BASE_ID, candidate_id
from frames_cli.workspace.atomic import atomic_write_json

if TYPE_CHECKING:
    from frames_cli.evolution.round.context import RunContext
    from frames_cli.evolution.state.checkpoint import LoopMemory, RoundRecord
    from frames_cli.evolution.state.records import RunState
    from frames_cli.evolution.state.settings import Settings
    from frames_cli.evolution.state.splits import Split


class Candidates:
    """The candidates of one run and what is done to each: evaluated, gated against S0, explained,
    committed, scored per set, attributed; the front recomputed as they come.

    The round's stages (evolution/run/loop.py) call these; the state and memory are the run's own objects,
    changed in place. What is read of the candidates (files, skill sets, evaluations, a round's
    changes) comes from `store`, which reads each once.

    Args:
        ctx: the run's collaborators.
        state: the run's record; `candidates` and `front` are kept here.
        memory: the loop's progress (case ids of E, disputes, models).
        settings: the run's evolution settings.
        base_files: `skills/` files of the base commit (path -> bytes).
        split: the run's diagnosis / selection / test sets.
    """

    def __init__(
        self, ctx: RunContext, state: RunState, memory: LoopMemory, settings: Settings, base_files: dict[str, bytes],
        split: Split,
    ):
        self.ctx = ctx
        self.state = state
        self.memory = memory
        self.settings = settings
        self.split = split
        self.store = CandidateStore(ctx.store, state, ctx.evals_dir, base_files)

    def excluded(self) -> set[str]:
        """Cases that count in no set now: disputed and not confirmed by a person, or `label: disputed`."""
        return excluded_ids(self.ctx.cases, self.memory.disputes)


    def score_candidate(self, cand: Candidate, ev: Evaluation) -> None:
        """Score `cand` on the diagnosis and the selection set, disputed cases left out; its headline
        figures (what the gate and the front use) are the selection set's."""
        excluded = self.excluded()
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
        # A child rejected early was not scored on every case: no gain to test (and it is off the front).
        cand.gain_p = None if cand.parent_id is None or ev.early_stop else self._gain_p(ev)

    def _gain_p(self, ev: Evaluation) -> float:
        """The child of evaluation `ev` against S0 on the selection cases no diagnoser saw
        (evidence.gain_p_value); a case lost on either side is compared on neither."""
        lost = self._lost_ids(BASE_ID) | {r["case_id"] for r in ev.results if r.get("lost")}
        # A diagnosed case is rewritten for because S0 failed it: re-drawn, it regresses to its
        # mean, a gain the exact test would count as real (evidence.py).
        gated = set(self.split.selection) - set(self.split.diagnosis) - self.excluded() - lost
        child = outcomes_from_results(r for r in ev.results if r["case_id"] in gated)
        return gain_p_value(self._outcomes(BASE_ID, lost), child, self.settings.samples)

    def evaluate_child(self, cid: str, files: Mapping[str, bytes], parent: str) -> None:
        """Evaluate a child (or sub-child) of `parent` made of `files` on E, blind, and keep its
        results; with early rejection on, the evaluation stops once the gate must reject it."""
        self.keep_evaluation(
            cid,
            self.ctx.evaluate(
                cid, self.store.skill_set(cid, files), self.memory.eval_case_ids, self._early_rejection(parent, files)
            ),
        )

    def gate_child(self, cid: str, files: Callable[[], Mapping[str, bytes]], parent: str) -> tuple[GateVerdict, dict]:
        """The gate's verdict on an evaluated child (made of `files()`, read only to draw samples) against S0
        (never against the parent), and its record (the verdict's JSON with `lost_left_out`). A case lost on
        either side is compared on neither: its missing answer says nothing of the skills. A child rejected
        early gets the verdict that is certain whatever its unevaluated cases give. With sequential sampling on,
        a child not rejected early is decided by evolution/compare/sequential.py, which may draw more samples of
        S0 and the child (kept in their evaluations' `gate_samples`); with early rejection on, a look's samples
        of the child come in stages and stop once its rejection is certain (and, when attribution may analyse
        the child, once its failing categories are too). `parent` is the child's parent.

        Raises:
            FramesError: the child was rejected early, yet its results no longer make the rejection certain.
        """
        seq, evaluation = self.ctx.sequential, self.store.evaluation(cid)
        if seq is not None and not evaluation.early_stop:
            stage = self.settings.stage_cases if self.settings.early_rejection else 0
            verdict = sequential_verdict(
                seq, lambda: (self._drawn(BASE_ID), self._drawn(cid)),
                lambda side, ids, first, count: self._draw(
                    BASE_ID if side == "baseline" else cid, files, ids, first, count
                ),
                stage, self._analysed(parent, files()),
            )
            lost = set(self._drawn(BASE_ID).lost_at) | set(self._drawn(cid).lost_at)
            return verdict, {**verdict.to_json(), "lost_left_out": sorted(lost)}
        lost = self._lost_ids(BASE_ID) | self._lost_ids(cid)
        base = self._outcomes(BASE_ID, lost)
        if evaluation.early_stop:
            certain = certain_rejection(
                self.ctx.gate, base, self._outcomes(cid, lost), evaluation.early_stop["skipped"]
            )
            if certain is None:
                raise FramesError(f"{cid} was rejected early, yet its results no longer make the rejection certain")
            verdict = dataclasses.replace(certain, early_stop=evaluation.early_stop)
            if seq is not None:  # decided at the first look: α there is α_1 of the run's α
                verdict = dataclasses.replace(verdict, alpha=seq.gate.alpha, sequential=seq.record())
        else:
            verdict = self.ctx.gate.check(base, self._outcomes(cid, lost))
        return verdict, {**verdict.to_json(), "lost_left_out": sorted(lost)}

    def _drawn(self, cid: str) -> Drawn:
        """Candidate `cid`'s samples on the selection set so far, its evaluation's and the sequential gate's."""
        from frames_cli.formats.case import must_pass_ids

        gated = set(self.split.selection) - self.excluded()
        ev = self.store.evaluation(cid)
        return drawn_outcomes(
            (r for r in [*ev.results, *ev.gate_samples] if r["case_id"] in gated),
            must_pass_ids(self.ctx.cases.values()),
        )

    def _draw(
        self, cid: str, files: Callable[[], Mapping[str, bytes]], case_ids: list[str], first: int, count: int
    ) -> None:
        """Draw samples `first`… (`count` of them) of `case_ids` for candidate `cid` and keep them in its evaluation."""
        if self.ctx.sample_more is None:
            raise FramesError("the sequential gate needs more samples, but this run cannot draw them")
        skills = self.store.skill_set(cid, self.store.base_files if cid == BASE_ID else files())
        drawn = self.ctx.sample_more(cid, skills, case_ids, first, count)
        ev = self.store.evaluation(cid)
        self.keep_evaluation(cid, dataclasses.replace(ev, gate_samples=[*ev.gate_samples, *drawn]))

    def commit_child(self, r: RoundRecord, child: Candidate, changes: Mapping[str, bytes], gate: dict | None) -> bool:
        """Score, explain and commit an evaluated child of the round's parent; an accepted child
        joins the pool and maybe the front. Returns True when it is a new front member."""
        evaluation, parent = self.store.evaluation(child.id), self.state.candidate(r.parent)
        self.score_candidate(child, evaluation)
        self._explain(child, r, changes, gate)
        models = self.state.config["models"]
        child.commit = commits.commit_candidate(self.ctx.store, self.state, child, r, dict(changes), models)
        child.diff_size = self.ctx.store.diff_stat(parent.commit, child.commit).lines_changed
        self.state.candidates.append(child)
        before = set(self.state.front)
        if child.gate_passed:
            self.ctx.accept(
                child.id, child.commit, self.store.skill_set(child.id, {**self.store.files(parent.id), **changes})
            )
        self.update_front()
        commits.add_metrics_note(self.ctx.store, self.state, child)
        return child.id in self.state.front and child.id not in before

    def attribution(self, r: RoundRecord, cand: Candidate) -> Attribution | None:
        """The attribution of `cand` (the round's child or a sub-child), or None when there is nothing
        to attribute: it joined the front, or it changed fewer than two skills."""
        if len(cand.changed_skills) < 2 or cand.id in self.state.front:
            return None
        from frames_cli.formats.case import must_pass_ids

        # Disputed cases count nowhere; a case lost on either side says nothing of the rewrites.
        counted = set(self.memory.eval_case_ids) - self.excluded() - self._lost_ids(r.parent) - self._lost_ids(cand.id)
        must_pass = must_pass_ids(self.ctx.cases.values())
        parent_ev, child_ev = self.store.evaluation(r.parent), self.store.evaluation(cand.id)
        parent = outcomes_from_results([x for x in parent_ev.results if x["case_id"] in counted], must_pass)
        child = outcomes_from_results([x for x in child_ev.results if x["case_id"] in counted], must_pass)
        if cand.gate_passed:
            why, categories, mp = (
                "dominated", dominated_categories(self.state.candidate(r.parent).per_category, cand.per_category), [],
            )
        else:
            why, categories, mp = "gate", cand.failed_categories(), cand.gate_details.get("must_pass_broken", [])
        catalog = catalog_changes(
            self.store.parent_skills(r), self.store.skill_set(cand.id, self.store.files(cand.id)), cand.changed_skills
        )
        return attribute(
            cand.id, why, categories, parent, child, loaded_skills(child_ev.results), cand.changed_skills, catalog, mp
        )

    def make_sub_child(self, r: RoundRecord, found: Attribution) -> tuple[str | None, bool]:
        """Evaluate, gate and commit the sub-child that keeps only `found.kept` of the round's
        rewrites; returns (its id, whether it is a new front member), or (None, False) when it
        equals an existing candidate."""
        changes = {p: d for p, d in self.store.child_changes(r).items() if p.split("/")[1] in found.kept}
        files = {**self.store.files(r.parent), **changes}
        twin = self.twin(files)
        if twin:
            self.ctx.on_event(SubChildTwin(r.round, tuple(found.implicated), twin))
            return None, False
        cid = candidate_id(r.round, 1 + sum(c.round == r.round for c in self.state.candidates))
        self.ctx.on_event(EvaluatingSubChild(r.round, cid, found.child, tuple(found.implicated)))
        self.evaluate_child(cid, files, r.parent)
        verdict, gate = self.gate_child(cid, lambda: files, r.parent)
        self.ctx.on_event(Gated(r.round, cid, verdict.passed, verdict.summary()))
        sub = Candidate(
            cid, "", r.parent, r.round, cut_from=found.child, left_out={s: list(c) for s, c in found.implicated.items()}
        )
        return cid, self.commit_child(r, sub, changes, gate)

    def _explain(self, child: Candidate, r: RoundRecord, changes: Mapping[str, bytes], gate: dict | None) -> None:
        """Fill in what a reviewer needs: gate verdict, blueprints, motivating failures, drops, votes."""
        child.gate_passed = bool(gate and gate["passed"])
        child.gate_details = gate or {}
        child.changed_skills = skill_names(changes)
        child.blueprints = [b for b in r.blueprints if b["skill"] in child.changed_skills]
        child.motivating_case_ids = sorted({c for b in child.blueprints for ch in b["changes"] for c in ch["case_ids"]})
        failing = self.store.evaluation(r.parent).failing()
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
        child.policy_changes = [
            c for o in r.outcomes if o["skill"] in child.changed_skills for c in o.get("policy_changes", [])
        ]
        child.votes_needed, child.diagnosers = self.settings.vote_threshold, self.settings.diagnosers

    def keep_evaluation(self, cid: str, ev: Evaluation) -> None:
        """Write `ev` to `<evals_dir>/<cid>.json` (atomically): the per-case results later stages read
        (through the store, which is handed the text written rather than reading it back)."""
        written = atomic_write_json(self.ctx.evals_dir / f"{cid}.json", ev.to_json())
        # What was written, not `ev`: the file's keys are sorted and credentials redacted, and a
        # resumed run reads the file; both must see the same evaluation.
        self.store.remember(cid, Evaluation(**json.loads(written)))

    def _early_rejection(self, parent: str, files: Mapping[str, bytes]) -> EarlyRejection | None:
        """What lets the child (made of `files`) stop its evaluation once the gate must reject it
        (None when turned off).

        S0's lost cases are left out of its outcomes, as in the gate; the rule leaves out the
        child's lost cases as they come (evolution/compare/early.rejection_rule). When attribution may
        analyse the child (it is on and the child changes several skills), the parent's outcomes
        on the cases attribution counts go along, so that the cases it needs are evaluated after
        the stop (evolution/compare/early.cases_to_settle)."""
        if not self.settings.early_rejection:
            return None
        from frames_cli.formats.case import must_pass_ids

        must_pass = must_pass_ids(self.ctx.cases.values())
        analysed = None
        if self._analysed(parent, files):
            counted = set(self.memory.eval_case_ids) - self.excluded() - self._lost_ids(parent)
            analysed = outcomes_from_results(
                [x for x in self.store.evaluation(parent).results if x["case_id"] in counted], must_pass
            )
        return EarlyRejection(self.ctx.gate, self._outcomes(BASE_ID, self._lost_ids(BASE_ID)), must_pass,
                              self.settings.tolerance, self._outcomes(parent), analysed)

    def _analysed(self, parent: str, files: Mapping[str, bytes]) -> bool:
        """Whether attribution may analyse the child of `parent` made of `files`: it is on and the
        child changes several skills (then a rejection's failing categories must be the full evaluation's)."""
        before = self.store.files(parent)
        changed = {path.split("/")[1] for path in set(files) | set(before) if files.get(path) != before.get(path)}
        return self.settings.attribution_steps > 0 and len(changed) >= 2

    def _lost_ids(self, cid: str) -> set[str]:
        """Ids of the cases with a lost result in candidate `cid`'s evaluation on E."""
        return {r["case_id"] for r in self.store.evaluation(cid).results if r.get("lost")}

    def _outcomes(self, cid: str, leave_out: frozenset[str] | set[str] = frozenset()) -> Outcomes:
        """Candidate `cid`'s per-case outcomes on the selection set (what the gate judges), with the
        must-pass marks of the case files; cases in `leave_out` are not compared."""
        from frames_cli.formats.case import must_pass_ids

        gated = set(self.split.selection) - self.excluded() - leave_out
        results = [r for r in self.store.evaluation(cid).results if r["case_id"] in gated]
        return outcomes_from_results(results, must_pass_ids(self.ctx.cases.values()))

    def twin(self, files: Mapping[str, bytes]) -> str | None:
        """The id of the first candidate whose skills/ files are `files`, or None."""
        return next((c.id for c in self.state.candidates if self.store.files(c.id) == files), None)

    def point(self, c: Candidate) -> FrontPoint:
        """Candidate `c` as a point of the Pareto front: pass rate (0..1) on the selection set, mean
        tokens per case, and its creation order (0 for S0); an unscored candidate counts as 0."""
        return FrontPoint(c.id, c.pass_rate or 0.0, c.mean_tokens or 0.0, self.state.candidates.index(c))

    def update_front(self) -> None:
        """Recompute the front over S0 and the accepted children; keep it in creation order
        (the order the round-robin selector cycles) and mirror it under refs/frames/runs/<run>/front/."""
        accepted = [c for c in self.state.candidates if c.parent_id is None or c.gate_passed]
        front = pareto_front([self.point(c) for c in accepted])
        self.state.front = [p.key for p in sorted(front, key=lambda p: p.order)]
        commits.publish_front(self.ctx.store, self.state)



def skill_names(changes: Mapping[str, bytes]) -> list[str]:
    """Skill names of `skills/<name>/SKILL.md` paths, sorted."""
    return sorted({path.split("/")[1] for path in changes})

