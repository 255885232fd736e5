"""The run's end (evolution/decide/confirm.py): every child is ranked, one rejected early included, and the
samples the rule needs are drawn once, with their own numbers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from frames_cli.errors import BudgetExceeded
from frames_cli.evolution.decide.confirm import recommend_run
from frames_cli.evolution.round.context import Evaluation
from frames_cli.evolution.state.events import Event
from frames_cli.evolution.state.records import Candidate, RunState
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.evolution.state.settings import Settings
from frames_cli.evolution.state.splits import Split
from frames_cli.workspace.config import FramesConfig, with_overrides

DIAGNOSIS = [f"d{i}" for i in range(6)]
UNSEEN = [f"u{i}" for i in range(6)]


def rec(case_id: str, passed: bool, sample: int = 0) -> dict:
    return {"case_id": case_id, "category": "x", "sample": sample, "passed": passed}


@dataclass
class Ctx:
    evals_dir: Path
    budget: int = 10_000
    drawn: list[tuple[str, tuple[str, ...], int]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    passes: dict[str, bool] = field(default_factory=dict)

    def sample_more(self, cid, skills, case_ids, first, count):
        if len(case_ids) > self.budget:
            raise BudgetExceeded("spent")
        self.budget -= len(case_ids)
        self.drawn.append((cid, tuple(case_ids), first))
        return [rec(c, self.passes.get(cid, False), first) for c in case_ids]

    def on_event(self, event: Event) -> None:
        self.events.append(event)


class Store:
    """The part of evolution/round/candidate_store.CandidateStore the run's end reads, over evaluation files."""

    def __init__(self, evals_dir: Path):
        self.evals_dir = evals_dir

    def has_evaluation(self, name: str) -> bool:
        return (self.evals_dir / f"{name}.json").is_file()

    def evaluation(self, name: str) -> Evaluation:
        return Evaluation(**json.loads((self.evals_dir / f"{name}.json").read_text()))

    def files(self, cid: str) -> dict:
        return {}

    def skill_set(self, cid: str, files: dict) -> object:
        return object()


class Log:
    """The part of evolution/round/evaluations.EvaluationLog the run's end uses."""

    def __init__(self, ctx: Ctx):
        self.ctx = ctx
        self.store = Store(ctx.evals_dir)

    def keep(self, name: str, ev: Evaluation) -> None:
        (self.ctx.evals_dir / f"{name}.json").write_text(json.dumps(ev.to_json()))


def setup(tmp_path: Path, budget: int = 10_000) -> tuple[Log, RunState, Split, Settings]:
    ctx = Ctx(tmp_path, budget, passes={"r1c1": True, "r2c1": True})
    cands = Log(ctx)
    write = lambda name, results, early=None: cands.keep(name, Evaluation(0.0, {}, 0.0, None, results, early))  # noqa: E731
    write(BASE_ID, [rec(c, False) for c in DIAGNOSIS + UNSEEN])
    # r1c1 passes everything but was stopped early before its diagnosis cases (the gate saw enough):
    # ranked only on a completed evaluation, it comes first and is tested.
    write("r1c1", [rec(c, True) for c in UNSEEN], {"evaluated": 6, "skipped": DIAGNOSIS, "reason": "certain"})
    write("r2c1", [rec(c, c in ("d0", "u0")) for c in DIAGNOSIS + UNSEEN])
    config = with_overrides(FramesConfig(), "evolution", recommend_alpha=0.05, gate_max_samples=40)
    settings = Settings.from_config(config)
    state = RunState("20261202-120000-aaaaaa", "a" * 40, status="finished", config={"evolution": settings.to_json()})
    state.candidates = [Candidate(BASE_ID, "a" * 40, None, 0, 0.0),
                        Candidate("r1c1", "b" * 40, BASE_ID, 1, 1.0, gate_passed=False),
                        Candidate("r2c1", "c" * 40, BASE_ID, 2, 0.2, gate_passed=True, gain_p=0.5)]
    split = Split(tuple(DIAGNOSIS), tuple(UNSEEN))
    return cands, state, split, settings


def test_a_child_rejected_early_is_completed_and_ranked_with_the_others(tmp_path):
    cands, state, split, settings = setup(tmp_path)
    rec_ = recommend_run(cands, cands.ctx, set(), state, split, settings)
    # r1c1 completed on the 6 diagnosis cases it skipped (samples from 0), ranked first (100 %), tested:
    # significant (6 of 6 unseen fixed) but gate-failed, so the turn passes to r2c1, which is not significant.
    assert ("r1c1", tuple(DIAGNOSIS), 0) in cands.ctx.drawn
    assert [s.member for s in rec_.steps] == ["r1c1", "r2c1"] and rec_.member is None
    assert (tmp_path / "r1c1-rest.json").is_file()
    # A second end (a resume) draws nothing again.
    drawn = len(cands.ctx.drawn)
    assert recommend_run(cands, cands.ctx, set(), state, split, settings) == rec_ and len(cands.ctx.drawn) == drawn


def test_a_budget_spent_while_drawing_decides_nothing_and_says_so(tmp_path):
    cands, state, split, settings = setup(tmp_path, budget=3)
    rec_ = recommend_run(cands, cands.ctx, set(), state, split, settings)
    assert (rec_.member, rec_.status, rec_.budget_spent) == (None, "none", True)
    assert rec_.words().startswith("not decided: the budget ran out")
