"""The sample store (evaluation/samples.py) and S0's gate samples reused by later runs on the same base.

Invariants:
1. A sample is drawn once per (skill set, case, sample index, setup): a later call, from a new
   store object reading the same folder, takes it from the store; lost records are not kept.
2. An edited case, other skills or another setup (the agent's program edited) draw afresh.
3. A later `frames evolve` on the same base takes S0's extra samples from the store instead of
   calling the model again, and decides every child as a run that draws them anew.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
from pathlib import Path

from frames_cli.evaluation.samples import SampleStore, setup_key, skills_key
from frames_cli.evolution.run.driver import EvolveOptions, evolve
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task
from frames_cli.workspace.config import ExecutorConfig, FramesConfig
from frames_cli.workspace.layout import Workspace

from helpers.airline import CONFIG, build_repo


def _case(cid: str, expected: str = "yes") -> Case:
    return Case(cid, "cat", Source("manual"), "",
                Task({"text": f"question {cid}", "fields": {}}, expected, Check("exact"), "JSON"),
                Diagnosis(evidence=["a rule"]))


class Recorder:
    """A draw that records what it was asked for; sample 1 of case `lost` comes back lost."""

    def __init__(self) -> None:
        self.asked: list[tuple[list[str], int, int]] = []

    def __call__(self, cases: list[Case], first: int, count: int) -> list[dict]:
        self.asked.append(([c.id for c in cases], first, count))
        return [{"case_id": c.id, "category": c.category, "sample": s, "passed": s % 2 == 0, "tokens": 10,
                 "lost": c.id == "lost" and s == 1}
                for c in cases for s in range(first, first + count)]


def test_a_sample_is_drawn_once_and_read_back_by_a_later_store(tmp_path: Path) -> None:
    cases = [_case("a"), _case("b"), _case("lost")]
    key = skills_key({"skills/x/SKILL.md": b"one"})
    draw = Recorder()
    records, reused = SampleStore(tmp_path, "setup").samples(key, cases, 1, 2, draw)
    assert reused == 0 and draw.asked == [(["a", "b", "lost"], 1, 2)]
    assert [(r["case_id"], r["sample"]) for r in records] == [("a", 1), ("a", 2), ("b", 1), ("b", 2), ("lost", 1),
                                                              ("lost", 2)]
    later, again = SampleStore(tmp_path, "setup"), Recorder()
    records, reused = later.samples(key, cases, 0, 3, again)
    # Sample 0 of every case was never drawn; the lost sample 1 of `lost` is asked for again.
    assert again.asked == [(["a", "b"], 0, 1), (["lost"], 0, 2)]
    assert reused == 5 and {r["sample"] for r in records if r.get("stored")} == {1, 2}
    assert later.get(key, cases[0], 2)["passed"] is True and later.get(key, cases[0], 2)["stored"] is True


def test_edited_cases_other_skills_and_other_setups_draw_afresh(tmp_path: Path) -> None:
    key = skills_key({"skills/x/SKILL.md": b"one"})
    SampleStore(tmp_path, "setup").samples(key, [_case("a")], 0, 1, Recorder())
    store = SampleStore(tmp_path, "setup")
    assert store.get(key, _case("a"), 0) is not None
    assert store.get(key, _case("a", expected="no"), 0) is None
    assert store.get(skills_key({"skills/x/SKILL.md": b"two"}), _case("a"), 0) is None
    assert SampleStore(tmp_path, "other").get(key, _case("a"), 0) is None


def test_the_setup_key_follows_the_agent_program_s_content(tmp_path: Path) -> None:
    (tmp_path / "frames.yaml").write_text("version: 1\n")
    (tmp_path / "agent.py").write_text("print(1)\n")
    ws = Workspace.open(tmp_path)
    config = dataclasses.replace(FramesConfig(),
                                 executor=ExecutorConfig(kind="command", command=["python3", "agent.py"]))
    before = setup_key(ws, config)
    assert setup_key(ws, config) == before
    (tmp_path / "agent.py").write_text("print(2)\n")
    assert setup_key(ws, config) != before


def test_a_later_run_on_the_same_base_reuses_s0_s_extra_samples(tmp_path: Path) -> None:
    for seed in range(1, 7):
        config = copy.deepcopy(CONFIG)
        config["evolution"].update(gate="noise-aware", tolerance=0.0, gate_max_samples=8, seed=seed,
                                   attribution_steps=0, max_rounds=2)
        config["eval"] = {"samples": 2}
        repo = build_repo(tmp_path / str(seed), config)
        ws = Workspace.open(repo.root)
        first = evolve(ws, EvolveOptions()).state
        if _evals(ws, first.run_id)[BASE_ID]["gate_samples"]:
            break
    else:
        raise AssertionError("S0 was never sampled further in seeds 1-6: the test shows nothing")
    # The model cache would answer the same calls: without it, only the sample store can.
    shutil.rmtree(ws.state_dir / "cache")
    reused = evolve(ws, EvolveOptions(force=True)).state
    shutil.rmtree(ws.state_dir / "cache")
    shutil.rmtree(ws.state_dir / "samples")
    fresh = evolve(ws, EvolveOptions(force=True)).state
    extra = _evals(ws, reused.run_id)[BASE_ID]["gate_samples"]
    assert extra and all(r.get("stored") for r in extra)
    assert not any(r.get("stored") for r in _evals(ws, fresh.run_id)[BASE_ID]["gate_samples"])
    def decisions(s):
        return [(c.id, c.gate_passed, c.gate_details.get("sequential", {}).get("categories")) for c in s.candidates]

    assert decisions(reused) == decisions(fresh) == decisions(first)
    assert _calls(ws, reused.run_id) < _calls(ws, fresh.run_id)


def _evals(ws: Workspace, run_id: str) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (ws.state_dir / "runs" / run_id / "evals").glob("*.json")}


def _calls(ws: Workspace, run_id: str) -> int:
    return json.loads((ws.state_dir / "runs" / run_id / "ledger.json").read_text())["roles"]["executor"]["calls"]
