"""The collaborators of an evolve run (RunContext): model client, executor and
judge, evaluation, regression pool, retrieval, guards, gates, stop request."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frames_cli.evolution.compare.gate import PerCategoryGate
from frames_cli.evolution.compare.sequential import SequentialGate
from frames_cli.evolution.propose.lessons import lesson_passages, load_lessons, save_lessons
from frames_cli.evolution.propose.policy_sentences import policy_sections
from frames_cli.evolution.round.context import Evaluation, RunContext
from frames_cli.evolution.round.stop import StopRequest
from frames_cli.evolution.round.record import LoopMemory
from frames_cli.evolution.state.checkpoint import Checkpointer
from frames_cli.evolution.state.disputes import save_disputes
from frames_cli.evolution.state.events import Event, ResultsLost, RetrievalEmpty, RetrievalLeftOut, SamplesReused
from frames_cli.evolution.state.records import RunState
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.evolution.state.runs import run_dir
from frames_cli.evolution.state.settings import Settings
from frames_cli.evolution.state.splits import Split

if TYPE_CHECKING:
    from frames_cli.evolution.compare.early import EarlyRejection
    from frames_cli.formats.case import Case
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

#: `touch .frames/STOP` asks a running evolve to stop after its current step (the file is consumed).
STOP_FILE = "STOP"


def build_context(
    ws: Workspace, config: FramesConfig, store: Any, state: RunState, memory: LoopMemory, settings: Settings,
    cases: dict[str, Case], use_cache: bool, on_event: Callable[[Event], None], progress: Any,
) -> RunContext:
    """Build the run's collaborators: model client, executor, judge, regression pool, gate, checkpoints."""
    from frames_cli.evaluation.pool import RegressionPool
    from frames_cli.evaluation.samples import SampleStore, skills_key
    from frames_cli.executor.factory import make_executor
    from frames_cli.ingest.cases.priors import load_priors
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.sim.world import SimWorld, policy_texts

    folder = run_dir(ws, state.run_id)
    folder.mkdir(parents=True, exist_ok=True)
    # The simulator's world (used only by `frames-sim/` models) shares the cases loaded here.
    client = ModelClient(
        ws, config, run_dir=folder, use_cache=use_cache,
        sim_world=SimWorld.from_cases(list(cases.values()), policy_texts(ws)),
    )
    executor = make_executor(ws, config, client)
    judge = client if config.models.judge else None
    base_progress = progress
    if base_progress is not None:
        # The runner reports cases done; the display adds the run's tokens so far (all roles).
        def progress(done: int, total: int) -> None:
            base_progress(done, total, client.ledger.total_tokens)
    pool = RegressionPool.load(ws)
    run_eval = _Evaluator(cases, settings, executor, judge, progress, on_event)
    reports, draw = run_eval.reports, run_eval.draw
    split = Split.from_json(memory.split) if memory.split else Split.single(memory.eval_case_ids)
    diagnosed = set(split.diagnosis)

    sample_store = SampleStore.of(ws, config) if use_cache and config.llm.cache else None
    base_key = skills_key(store.read_files(state.base))

    def sample_more(cid: str, skills: SkillSet, case_ids: Sequence[str], first: int, count: int) -> list[dict]:
        # For the sequential gate. S0's samples are the same skills on the same cases in every run
        # on this base: drawn once, kept in the sample store (evaluation/samples.py).
        chosen = [cases[c] for c in case_ids]
        if cid != BASE_ID or sample_store is None:
            return draw(cid, skills, chosen, first, count)
        records, reused = sample_store.samples(
            base_key, chosen, first, count, lambda group, start, n: draw(cid, skills, group, start, n)
        )
        if reused:
            on_event(SamplesReused(cid, reused))
        return records

    def accept(cid: str, sha: str, skills: SkillSet) -> None:
        # After a resume the report may be gone from memory; evaluating again is answered from the
        # model cache, so it costs nothing and gives the same results.
        if cid not in reports:
            run_eval(cid, skills, memory.eval_case_ids)
        pool.add(reports[cid], sha)
        pool.save()

    policies = store.read_files(state.base, "policies/")
    return RunContext(
        store=store,
        client=client,
        evaluate=run_eval,
        cases=cases,
        # Anchor cases come from the diagnosis set only: the rewriter must not see held-out cases.
        anchors=lambda skill, n: [c for c in pool.anchors(skill, len(pool.entries)) if c in diagnosed][:n],
        priors=load_priors(ws.root).for_skill,
        retriever=_retriever(
            store, state.base, policies, settings, on_event, ws.policies_dir,
            lesson_passages(load_lessons(ws), state.run_id), state.run_id,
        ),
        record_disputes=lambda disputes: save_disputes(ws, disputes),
        record_lessons=lambda lessons: save_lessons(ws, state.run_id, lessons),
        earlier_lessons=[x for x in load_lessons(ws) if x.run != state.run_id],
        **_guards(store, state.base, settings, cases.values(), policies),
        policy_sentences=policy_sections(policies),
        accept=accept,
        checkpointer=Checkpointer(ws),
        evals_dir=folder / "evals",
        stop=StopRequest(ws.state_dir / STOP_FILE),
        **gates(settings),
        sample_more=sample_more,
        on_event=on_event,
    )


@dataclass
class _Evaluator:
    """The run's evaluations of candidates (`RunContext.evaluate`) and its draws of more samples; the
    report of each full evaluation is kept in `reports` for the regression pool."""

    cases: dict[str, Case]
    settings: Settings
    executor: Any
    judge: Any
    progress: Any
    on_event: Callable[[Event], None]
    reports: dict[str, Any] = field(default_factory=dict)

    def __call__(
        self, cid: str, skills: SkillSet, case_ids: Sequence[str], early: EarlyRejection | None = None
    ) -> Evaluation:
        """Candidate `cid` (its `skills`) evaluated on `case_ids`, stopped early under `early` when given."""
        from frames_cli.evaluation.runner import evaluate
        from frames_cli.evaluation.staged import evaluate_staged

        chosen = [self.cases[c] for c in case_ids]
        settings, judge, progress = self.settings, self.judge, self.progress
        retries = settings.lost_retries  # the run's own, fixed at its start like every setting
        if early is None:
            report = self.reports[cid] = evaluate(
                chosen, skills, self.executor, samples=settings.samples, judge=judge, progress=progress,
                lost_retries=retries,
            )
            report.require_answers()
            _say_lost(cid, report, retries, self.on_event)
            return _summarise(report)
        # One batch per round of concurrent calls (as many as at the run's start, so a resume stops
        # after the same cases): the rule is asked as often as the calls allow.
        staging = early.staging(settings.stage_cases)
        staged = evaluate_staged(
            chosen, skills, self.executor, staging, samples=settings.samples, judge=judge, progress=progress,
            lost_retries=retries,
        )
        staged.report.require_answers()
        _say_lost(cid, staged.report, retries, self.on_event)
        evaluation = _summarise(staged.report)
        if staged.skipped:
            evaluation.early_stop = {
                "evaluated": len(chosen) - len(staged.skipped), "skipped": staged.skipped, "reason": staged.reason,
                "settled": staged.settled,
            }
        else:
            self.reports[cid] = staged.report
        return evaluation

    def draw(self, cid: str, skills: SkillSet, chosen: list[Case], first: int, count: int) -> list[dict]:
        """Samples `first`… (`count` of them) of the `chosen` cases for candidate `cid`: new sample numbers,
        so new draws (a sample's number is in its cache key), counted by the ledger like any evaluation."""
        from frames_cli.evaluation.runner import evaluate

        report = evaluate(
            chosen, skills, self.executor, samples=count, first_sample=first, judge=self.judge,
            lost_retries=self.settings.lost_retries,
        )
        _say_lost(cid, report, self.settings.lost_retries, self.on_event)
        return _summarise(report).results


def gates(settings: Settings) -> dict[str, Any]:
    """The run's gate and, when the noise-aware rule may sample further, its sequential gate (whose
    first look is then the gate early rejection and the first verdict ask)."""
    gate = PerCategoryGate(settings.tolerance, settings.gate, settings.gate_alpha)
    seq = SequentialGate.plan(gate, settings.samples, settings.gate_max_samples)
    return {"gate": seq.first_look() if seq else gate, "sequential": seq}


def _say_lost(cid: str, report: Any, retries: int, on_event: Callable[[Event], None]) -> None:
    """One event naming the results of `cid`'s evaluation that stayed lost, when there are any."""
    lost = report.lost()
    if lost:
        on_event(ResultsLost(cid, len(lost), retries, tuple(sorted({r.case_id for r in lost}))))


def _retriever(store: Any, base: str, files: Mapping[str, bytes], settings: Settings, on_event: Callable[[Event], None],
               policies_dir: Path, failed: Sequence[Any] = (), run_id: str | None = None) -> Callable[[str], Any]:
    """parent commit sha → `retrieval.PassageIndex` over the policies at the run's base commit
    (`files`, as `store.read_files(base, "policies/")` gives them), the
    skill changes in the parent's history (built once per parent; run `run_id`'s own children cited
    by candidate id, `retrieval.change_passages`) and `failed` (lessons.Passage of
    changes earlier runs saw fail), or always None when the run's `evolution.retrieval.enabled` is false.

    A policy document that cannot be read is left out of the index, with one event naming it.
    When the base commit has no file under `policies/` but the working tree's `policies_dir` has
    some (a symlinked folder, which git stores as a link, or documents not committed), one event
    says that no policy is indexed.
    """
    if not settings.retrieval["enabled"]:
        return lambda _sha: None
    from frames_cli.evolution.propose.retrieval import PassageIndex, change_passages, policy_passages
    from frames_cli.workspace.config import RetrievalConfig

    config = RetrievalConfig(**settings.retrieval)
    policies, problems = policy_passages(files)
    for problem in problems:
        on_event(RetrievalLeftOut(problem))
    if not files and policies_dir.is_dir() and any(p.is_file() for p in policies_dir.rglob("*")):
        on_event(RetrievalEmpty(base, policies_dir.is_symlink()))
    built: dict[str, PassageIndex] = {}

    def index(sha: str) -> PassageIndex:
        if sha not in built:
            built[sha] = PassageIndex(
                [*policies, *change_passages(store, sha, config.max_changes, run_id), *failed], config
            )
        return built[sha]

    return index


def _guards(
    store: Any, base: str, settings: Settings, cases: Iterable[Case], policies: Mapping[str, bytes]
) -> dict[str, Any]:
    """The RunContext fields of the guards `settings.guards` switches on (evolution/propose/guards.py): the
    case-value index over `cases` and the policy at the base commit, and the policy sentences that
    S0's skills hold."""
    from frames_cli.evolution.propose.case_index import CaseValues
    from frames_cli.evolution.propose.policy_keeper import PolicyKeeper
    from frames_cli.formats.skill_set import SkillSet

    on = settings.guards
    if not any(on.values()):
        return {}
    out: dict[str, Any] = {}
    if on["case_values"] or on["rule_form"]:
        texts = [data.decode("utf-8", errors="replace") for data in policies.values()]
        out["case_values"] = CaseValues.build(cases, texts, check_values=on["case_values"], check_form=on["rule_form"])
    if on["policy_sentences"]:
        # A base skill that does not load is left out of S0 (CandidateStore.skill_set), so it keeps nothing.
        out["policy_keeper"] = PolicyKeeper.build(SkillSet.load_valid(store.read_files(base))[0], policies)
    return out


def _summarise(report: Any) -> Evaluation:
    """The loop's view of an EvalReport: metrics and per-case records (JSON-safe)."""
    results = [
        {
            "case_id": r.case_id,
            "category": r.category,
            "sample": r.sample,
            "passed": bool(r.passed),
            "reason": r.reason or "",
            "output": r.output,
            "skills_used": list(r.skills_used),
            "trajectory": list(r.trajectory),
            "tokens": r.usage.prompt_tokens + r.usage.completion_tokens,
            "lost": bool(r.lost),
        }
        for r in report.results
    ]
    per_category = {cat: stats.pass_rate for cat, stats in report.per_category().items()}
    return Evaluation(report.pass_rate, per_category, report.mean_tokens, report.cost_usd, results)
