"""What an evolve run works with (RunContext: git, models, cases,
strategies, callbacks) and what its evaluations return (Evaluation)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from frames_cli.evolution.round.selection import RoundRobinSelector, Selector

if TYPE_CHECKING:
    from frames_cli.evolution.compare.early import EarlyRejection
    from frames_cli.evolution.compare.gate import Gate
    from frames_cli.evolution.compare.sequential import SequentialGate
    from frames_cli.evolution.propose.case_index import CaseValues
    from frames_cli.evolution.propose.lessons import Lesson
    from frames_cli.evolution.propose.policy_keeper import PolicyKeeper
    from frames_cli.evolution.propose.retrieval import PassageIndex
    from frames_cli.evolution.round.stop import StopRequest
    from frames_cli.evolution.state.checkpoint import Checkpointer
    from frames_cli.evolution.state.events import Event
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.gitstore.store import GitStore
    from frames_cli.llm.client.client import ModelClient


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
            and past skill changes, evolution/propose/retrieval.py), or None when retrieval is off.
        accept: called with (candidate id, commit sha, skills) when a candidate is accepted (S0, or
            a child that passed the gate), so the regression pool learns from it.
        checkpointer: atomic state saves in the run folder.
        evals_dir: where per-case results of each candidate are kept.
        stop: the stop request.
        gate, selector: the strategies (with sequential sampling, `gate` is its first look).
        sequential: the noise-aware gate's sequential sampling (evolution/compare/sequential.py), or None
            when off (paper rule, or `evolution.gate_max_samples` ≤ `eval.samples`).
        sample_more: (candidate id, skills, case ids, first sample, samples) → the result records
            (as in `Evaluation.results`) of those samples of those cases: what the sequential gate draws.
        record_disputes: called with the run's disputes (case id → record) whenever it learns one,
            so later runs and `frames status` know them.
        record_lessons: called with the run's lessons (evolution/propose/lessons.py) after every round.
        earlier_lessons: the lessons of earlier runs (`.frames/failed-changes.json`); their left-out
            rewrites are shown to the rewriter of the same skill.
        case_values: the case-value index of evolution/propose/case_index.py (with the rule-form check), or None
            when both guards are off.
        policy_keeper: the policy sentences of S0's skills, or None when that guard is off.
        policy_sentences: the base commit's policy sentences by section
            (`evolution.policy_sentences.policy_sections`): the rewrite's duplicate check never
            counts two that one section holds side by side as one rule stated twice.
        on_event: what the run reports as it goes (state/events.py: typed events, `str()` one line for people).
        amendments: what diagnosers are told about policy lines that changed under the base's
            skills since they were written ("" when none; workspace/amendments.diagnoser_notice).
    """

    store: GitStore
    client: ModelClient
    evaluate: Callable[[str, SkillSet, Sequence[str], EarlyRejection | None], Evaluation]
    cases: Mapping[str, Case]
    anchors: Callable[[str, int], list[str]]
    accept: Callable[[str, str, SkillSet], None]
    checkpointer: Checkpointer
    evals_dir: Path
    stop: StopRequest
    gate: Gate
    selector: Selector = RoundRobinSelector()
    priors: Callable[[str], list[str]] = lambda _skill: []
    retriever: Callable[[str], PassageIndex | None] = lambda _sha: None
    record_disputes: Callable[[dict[str, dict]], None] = lambda _d: None
    record_lessons: Callable[[list[Lesson]], None] = lambda _l: None
    earlier_lessons: Sequence[Lesson] = ()
    case_values: CaseValues | None = None
    policy_keeper: PolicyKeeper | None = None
    policy_sentences: Mapping[str, frozenset[str]] = field(default_factory=dict)
    on_event: Callable[[Event], None] = lambda _event: None
    amendments: str = ""
    sequential: SequentialGate | None = None
    sample_more: Callable[[str, SkillSet, Sequence[str], int, int], list[dict]] | None = None


@dataclass
class Evaluation:
    """A candidate's results on the cases it was evaluated on, and per-case records.

    Attributes:
        pass_rate: overall, case-weighted, 0..1, over every evaluated case (the loop scores each set
            from `results`: evolution/compare/scoring.score).
        per_category: category → pass rate, over every evaluated case.
        mean_tokens: prompt + completion tokens per case.
        cost_usd: None when a price is unknown.
        results: one dict per case and sample: case_id, category, sample, passed, reason, output,
            skills_used, trajectory (the agent's steps), tokens (prompt + completion), lost (its
            answer never arrived: neither a pass nor a failure; absent in older runs).
        early_stop: None when every case was evaluated; else the child was rejected early:
            {"evaluated": cases run, "skipped": [ids not run], "reason": why the gate was certain}.
            The metrics are then over the evaluated cases only.
        gate_samples: records of the samples the sequential gate drew beyond `eval.samples`
            (sample ≥ k), as in `results`; read by the gate only, never by a rate, score or the pool.
    """

    pass_rate: float
    per_category: dict[str, float]
    mean_tokens: float
    cost_usd: float | None
    results: list[dict]
    early_stop: dict | None = None
    gate_samples: list[dict] = dataclasses.field(default_factory=list)

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
