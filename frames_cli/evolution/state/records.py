"""Run records: the persisted RunState and Candidate schema (state.json), and a run's summary.

`state.json` carries `schema` (SCHEMA_VERSION); a file from a newer frames is refused, not guessed at,
and an older one is upgraded on reading, one step per version (evolution/state/upgrades.py).
Run and candidate ids, refs and the review branch are evolution/state/run_ids.py; the run folders
(saving, reading, listing runs) evolution/state/runs.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from frames_cli.errors import InputError, Location
from frames_cli.evolution.state.run_ids import CANDIDATE_ID_RE, RUN_ID_RE
from frames_cli.evolution.state.settings import Settings
from frames_cli.evolution.state.strict_json import fields_from
from frames_cli.evolution.state.upgrades import upgrade

if TYPE_CHECKING:
    from frames_cli.evolution.compare.evidence import Recommendation

SCHEMA_VERSION = 6
STATUSES = ("running", "finished", "stopped", "failed")


def utc_now() -> str:
    """The current UTC time as ISO 8601 with seconds ("2026-11-29T10:15:00+00:00")."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class FailureNote:
    """A failing case of the parent that motivated a candidate, as the reviewer sees it.

    Attributes:
        case_id: the case id.
        category: its business category.
        reason: why the check failed ("expected 'cancel', got 'refund'").
        symptom: the case's diagnosis symptom, if it has one ("" otherwise).
    """

    case_id: str
    category: str
    reason: str
    symptom: str = ""


@dataclass
class Candidate:
    """One skill set of a run: S0 (id BASE_ID, no parent) or a child commit, with its evaluation.

    Rates are 0..1 on the run's selection set (the gate and the front are computed on it; the
    paper's evaluation set E when the run does not split); `per_category` maps category → pass rate.
    `pass_rate` None means committed but not yet evaluated (the loop may checkpoint between the two).

    Attributes:
        id: "r<round>c<n>"; see `candidate_id`.
        commit: 40-hex sha of the candidate's commit (for S0 the run's base commit).
        parent_id: the parent candidate's id; None for S0.
        round: the round that made it (0 for S0).
        pass_rate: overall, case-weighted pass rate.
        per_category: {category: pass rate}.
        mean_tokens: mean prompt + completion tokens per case of the executor on E.
        cost_usd: executor cost of evaluating it on E in USD; None when the model's price is unknown.
        gate_passed: the gate verdict against S0; None for S0 itself and for unevaluated children.
        gate_details: `GateVerdict.to_json()` of evolution/compare/verdict.py: {"passed", "tolerance",
            "checks": [{"category", "baseline", "child", "floor", "passed"}]}; {} when not gated.
        changed_skills: names of the skills changed against the parent (added or rewritten), sorted.
        blueprints: `Blueprint.to_json()` of evolution/propose/consensus.py, one per rewritten skill:
            {"skill", "new_skill", "description", "votes", "changes": [{"change", "rationale",
            "case_ids", "diagnosers"}]}.
        motivating_case_ids: the parent's failing cases cited by the kept proposals, sorted.
        failures: what those cases showed (a FailureNote per case id, when the loop had it).
        diff_size: lines inserted plus deleted under skills/ against the parent.
        dropped: {skill: why its change was dropped} (a rewrite that never validated).
        dropped_proposals: the round's proposals refused before the vote, one line each with the
            reason (a case value in the rule text, no cited case of the batch, a bad skill name).
        policy_changes: the policy sentences its rewrites removed or changed, each
            `policy_keeper.PolicyChange.to_json()` ({skill, sentence, source, kind, asked_by, case_ids}).
        votes_needed: q as a number of diagnosers, and `diagnosers` D, for "2 of 3 votes".
        case_counts: {category: n}, the cases of the selection set (E when the run does not split)
            each rate in `per_category` is over ({} in runs
            recorded before frames kept it); `n_cases` is their sum.
        samples: k, the samples per case (a rate is over n × k results).
        sets: {"diagnosis" | "selection" | "test": evolution/compare/scoring.Scores JSON ({"pass_rate",
            "per_category", "mean_tokens", "cases", "lost"})}: the same candidate on each set side
            by side; "test" only once the sealed test set was scored at the end of the run.
        lost: results (case × sample) of its evaluation on E whose answer was lost to the model
            layer on every try: left out of every rate, the gate and diagnosis (0 in older runs).
        attribution: for a child that failed the gate (or was dominated) and changed several
            skills: `attribution.Attribution.to_json()` of its analysis plus "sub_child" (the id of
            the sub-child made without the implicated rewrites, or None) and "note"; {} otherwise.
        cut_from: for a sub-child, the child whose implicated rewrites it leaves out; None otherwise.
        left_out: for a sub-child, skill → the broken cases that implicated the rewrite left out.
        gain_p: the one-sided exact p-value of its gain over S0 on the selection set
            (evidence.gain_p_value); None for S0, a child not fully evaluated (rejected early) and
            candidates of runs recorded before frames kept it.
    """

    id: str
    commit: str
    parent_id: str | None
    round: int
    pass_rate: float | None = None
    per_category: dict[str, float] = field(default_factory=dict)
    mean_tokens: float | None = None
    cost_usd: float | None = None
    gate_passed: bool | None = None
    gate_details: dict[str, Any] = field(default_factory=dict)
    changed_skills: list[str] = field(default_factory=list)
    blueprints: list[dict[str, Any]] = field(default_factory=list)
    motivating_case_ids: list[str] = field(default_factory=list)
    failures: list[FailureNote] = field(default_factory=list)
    diff_size: int = 0
    dropped: dict[str, str] = field(default_factory=dict)
    dropped_proposals: list[str] = field(default_factory=list)
    policy_changes: list[dict[str, Any]] = field(default_factory=list)
    votes_needed: int | None = None
    diagnosers: int | None = None
    sets: dict[str, Any] = field(default_factory=dict)
    case_counts: dict[str, int] = field(default_factory=dict)
    samples: int = 1
    lost: int = 0
    attribution: dict[str, Any] = field(default_factory=dict)
    cut_from: str | None = None
    left_out: dict[str, list[str]] = field(default_factory=dict)
    gain_p: float | None = None

    @property
    def n_cases(self) -> int | None:
        """The number of cases the overall pass rate is over; None when not recorded."""
        return sum(self.case_counts.values()) if self.case_counts else None

    @property
    def evaluated(self) -> bool:
        """True once the candidate has been evaluated on E."""
        return self.pass_rate is not None

    def failed_categories(self) -> list[str]:
        """The categories below their gate floor, in the gate's order (empty when not gated)."""
        return [c["category"] for c in self.gate_details.get("checks", []) if not c["passed"]]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (key order as the fields)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any, where: Location) -> Candidate:
        """Inverse of `to_json`.

        Raises:
            InputError: at `where`, for a missing or unknown key or a value of the wrong kind.
        """
        values = fields_from(cls, data, where)
        values["failures"] = [FailureNote(**fields_from(FailureNote, f, where)) for f in values.get("failures", [])]
        if not CANDIDATE_ID_RE.match(str(values["id"])):
            raise InputError(f"bad candidate id {values['id']!r}", where)
        return cls(**values)


@dataclass
class RunState:
    """Everything a run has decided so far: the checkpoint `frames evolve` resumes from, and what
    `frames runs/front/review/promote` read. Written atomically to `.frames/runs/<id>/state.json`.

    Attributes:
        run_id: `YYYYMMDD-HHMMSS-<6 hex>`.
        base: 40-hex sha of the base commit (S0).
        status: "running", "finished" (a stopping rule ended it), "stopped" (stop file or signal),
            "failed" (an error ended it; see `error`).
        round: rounds completed.
        candidates: every candidate in creation order, S0 first.
        front: ids of the current Pareto-front members, in the order the selector cycles them.
        stale_rounds: consecutive rounds without a new front member (for `patience`).
        config: the settings the run is fixed to, its one record of them (evolution/run/snapshot.run_snapshot):
            {"evolution": settings.Settings JSON, "models": {role: model}, "executor": executor.*,
            "guard_rules": the version of the guards' rules}.
        fingerprint: sha256 hex of the run's inputs besides the base (the counted cases and `config`;
            see snapshot.run_fingerprint); None for runs recorded before frames kept it, and for runs
            recorded before schema 3 (their fingerprint was over settings no run has now).
        started, finished: ISO 8601 UTC times; `finished` None while running.
        spend_tokens: prompt + completion tokens spent on every role so far.
        spend_usd: USD spent so far where prices are known; None when no price was known.
        stop_reason: why the run ended ("patience", "max_rounds", "budget", "stop file", "SIGTERM", ...).
        error: the error that failed the run, one line.
        branch: the review branch made for the recommended member, once made.
        recommendation: `evidence.Recommendation.to_json()`, once the run's end decided it ({}
            before; evolution/decide/confirm.py, and evolution/decide/prospective.py for a pending branch's looks).
        checkpoint: stage data owned by evolution/state/checkpoint.py (what a resumed round must not redo).
        schema: SCHEMA_VERSION of the writer.
    """

    run_id: str
    base: str
    status: str = "running"
    round: int = 0
    candidates: list[Candidate] = field(default_factory=list)
    front: list[str] = field(default_factory=list)
    stale_rounds: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    fingerprint: str | None = None
    started: str = field(default_factory=utc_now)
    finished: str | None = None
    spend_tokens: int = 0
    spend_usd: float | None = None
    stop_reason: str | None = None
    error: str | None = None
    branch: str | None = None
    recommendation: dict[str, Any] = field(default_factory=dict)
    checkpoint: dict[str, Any] = field(default_factory=dict)
    schema: int = SCHEMA_VERSION

    def candidate(self, cand_id: str) -> Candidate:
        """The candidate with id `cand_id`.

        Raises:
            InputError: the run has no such candidate (the message lists the run's ids).
        """
        for cand in self.candidates:
            if cand.id == cand_id:
                return cand
        known = ", ".join(c.id for c in self.candidates) or "none"
        raise InputError(f"run {self.run_id} has no candidate {cand_id!r} (candidates: {known})")

    def base_candidate(self) -> Candidate | None:
        """S0, the candidate for the base commit, once it is recorded."""
        return next((c for c in self.candidates if c.parent_id is None), None)

    def lost_results(self) -> int:
        """Results lost to the model layer over every candidate's evaluations (E and the test set)."""
        return sum(c.lost + int((c.sets.get("test") or {}).get("lost", 0)) for c in self.candidates)

    def front_candidates(self) -> list[Candidate]:
        """The front members, in `front` order."""
        return [self.candidate(cid) for cid in self.front]

    @property
    def settings(self) -> Settings:
        """The evolution settings the run started with (`config["evolution"]`)."""
        return Settings.from_json(self.config["evolution"])

    @property
    def recommend_alpha(self) -> float:
        """α of `evolution.recommend_alpha` the run started with."""
        return self.settings.recommend_alpha

    def children_evaluated(self) -> int:
        """How many children (sub-children included) were evaluated on the selection set."""
        return sum(1 for c in self.candidates if c.parent_id is not None and c.evaluated)

    def recommended(self) -> Recommendation | None:
        """The run's recommendation (evolution/compare/evidence.py), once its end decided it; None before."""
        from frames_cli.evolution.compare.evidence import Recommendation

        return Recommendation.from_json(self.recommendation) if self.recommendation else None

    def best(self) -> Candidate | None:
        """The member the run recommends (★, the review branch).

        Under the paper's rule (α = 1): the front member of the highest pass rate, then fewer mean
        tokens, then the older. Otherwise the member of the recorded recommendation while its
        branch stands (final, pending or unconfirmed), and S0 before the run's end decided it, when
        it gave no branch, or when later cases withdrew it. None before S0 is evaluated."""
        base = self.base_candidate()
        if self.recommend_alpha >= 1:
            members = [c for c in self.front_candidates() if c.evaluated]
            if members:
                return max(members, key=lambda c: (c.pass_rate, -(c.mean_tokens or 0.0), -self.candidates.index(c)))
        else:
            rec = self.recommended()
            if rec is not None and rec.member is not None and rec.status in ("final", "pending", "unconfirmed"):
                return self.candidate(rec.member)
        return base if base is not None and base.evaluated else None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON of the whole state."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any, where: Location) -> RunState:
        """Inverse of `to_json`.

        Raises:
            InputError: at `where`: written by a newer frames (schema above SCHEMA_VERSION), a missing
                or unknown key, a bad run id, status or candidate, or a front id with no candidate.
        """
        if isinstance(data, dict) and isinstance(data.get("schema"), int) and data["schema"] > SCHEMA_VERSION:
            raise InputError(
                f"run state schema {data['schema']} is newer than this frames ({SCHEMA_VERSION}); upgrade frames", where
            )
        if isinstance(data, dict) and isinstance(data.get("schema", 1), int):
            data = upgrade(data, SCHEMA_VERSION)
        values = fields_from(cls, data, where)
        if not isinstance(values["run_id"], str) or not RUN_ID_RE.match(values["run_id"]):
            raise InputError(f"bad run id {values['run_id']!r}", where)
        if values["status"] not in STATUSES:
            raise InputError(f"bad status {values['status']!r} (one of {', '.join(STATUSES)})", where)
        values["candidates"] = [Candidate.from_json(c, where) for c in values.get("candidates", [])]
        state = cls(**values)
        for cid in state.front:
            try:
                state.candidate(cid)
            except InputError as exc:
                raise InputError(exc.message, where) from None
        return state


@dataclass(frozen=True)
class RunSummary:
    """One line of `frames runs`. Rates 0..1, spend in tokens and USD (None = price unknown);
    `n_cases` the cases the rates are over (the selection set, E when the run does not split; None
    for runs recorded before frames kept case counts), `samples` the samples per case (k);
    `recommendation` the status of the run's recommendation (evolution/compare/evidence.STATUSES; None
    before its end decided) and `evidence` its words."""

    run_id: str
    status: str
    stop_reason: str | None
    base: str
    rounds: int
    candidates: int
    front_size: int
    spend_tokens: int
    spend_usd: float | None
    base_pass_rate: float | None
    best_pass_rate: float | None
    best_id: str | None
    started: str
    finished: str | None
    branch: str | None
    n_cases: int | None = None
    samples: int = 1
    recommendation: str | None = None
    evidence: str | None = None

    @classmethod
    def of(cls, state: RunState) -> RunSummary:
        """The summary of `state`."""
        base, best, rec = state.base_candidate(), state.best(), state.recommended()
        return cls(
            run_id=state.run_id,
            status=state.status,
            stop_reason=state.stop_reason,
            base=state.base,
            rounds=state.round,
            candidates=sum(1 for c in state.candidates if c.parent_id is not None),
            front_size=len(state.front),
            spend_tokens=state.spend_tokens,
            spend_usd=state.spend_usd,
            base_pass_rate=base.pass_rate if base else None,
            best_pass_rate=best.pass_rate if best else None,
            best_id=best.id if best else None,
            started=state.started,
            finished=state.finished,
            branch=state.branch,
            n_cases=base.n_cases if base else None,
            samples=base.samples if base else 1,
            recommendation=("paper's rule" if rec.rule == "paper" else rec.status) if rec else None,
            evidence=rec.words() if rec else None,
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON with the field names as keys (`frames runs --json`)."""
        return dataclasses.asdict(self)
