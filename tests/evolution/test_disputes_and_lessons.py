"""Independent diagnosers, label disputes and the memory of what failed, in real runs on the simulator.

Invariants:
1. No two diagnosers of a round get the same prompt; how the batches were formed is recorded.
2. With fewer distinct batches than q, the round says so (before any model call) in its record.
3. A case a diagnoser disputes leaves the gate and the front (no candidate is scored on it, no
   blueprint cites it), is listed in report.md, `frames review` and `frames status`, and counts
   again once a person sets `label: confirmed`.
4. A change whose child failed the gate is shown to later diagnosers of the run and kept for later runs.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import yaml
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.evolution.compare.verdict import CategoryCheck, GateVerdict
from frames_cli.evolution.propose.consensus import Blueprint, Change
from frames_cli.evolution.round.record import GateRecord, RoundRecord, round_lessons
from frames_cli.evolution.propose.diagnose import DiagnoserResult, batching_note, make_batches
from frames_cli.evolution.propose.lessons import tried_section
from frames_cli.llm.store.audit import read_exchanges

from helpers.airline import CONFIG, build_repo, evolve, run_folder

#: The rule of these two cases is in no skill of S0, so the simulated executor fails them (floor 0.1).
MISLABELLED = ["cancel-2-0", "cancel-2-1"]


def config(**evolution) -> dict:
    data = json.loads(json.dumps(CONFIG))
    data["evolution"].update(evolution)
    return data


def test_no_two_diagnosers_of_a_round_get_the_same_prompt(tmp_path: Path) -> None:
    # B = 8 and D = 3: fewer failures than D × B, so batches are resampled.
    repo = build_repo(tmp_path / "ws", config(batch_size=8, max_rounds=2))
    menu = evolve(repo.root)
    prompts: dict[str, list[str]] = defaultdict(list)
    for e in read_exchanges(run_folder(repo.root, menu["run_id"]) / "exchanges.jsonl"):
        if e["role"] == "diagnoser" and len(e["messages"]) == 2:  # first turn, not a repair turn
            prompts[e["tag"].split("/")[0]].append(e["messages"][1]["content"])
    assert prompts and all(len(p) == len(set(p)) for p in prompts.values()), {k: len(v) for k, v in prompts.items()}
    state = json.loads((run_folder(repo.root, menu["run_id"]) / "state.json").read_text())
    rounds = [r for r in state["checkpoint"]["rounds"] if r["batches"]]
    assert rounds and all(r["batching"] and len({frozenset(b) for b in r["batches"]}) == len(r["batches"])
                          for r in rounds)


def test_a_round_that_cannot_reach_q_says_so() -> None:
    batches = make_batches(["only-one"], 8, 3, seed=0, round_no=1)
    assert batches == [["only-one"]]
    note = batching_note(1, batches, 8, 3, threshold=2)
    assert "only 1 distinct batch(es) for q = 2: no change can pass the vote" in note
    assert "2 diagnoser(s) not asked" in note
    assert batching_note(40, make_batches([f"c{i}" for i in range(40)], 8, 3, 0, 1), 8, 3, 2).startswith("disjoint")


def test_a_disputed_case_leaves_the_gate_and_the_front(tmp_path: Path) -> None:
    data = config(max_rounds=2)
    data["simulator"] = {"seed": 3, "p_insight": 1.0, "mislabelled": MISLABELLED}
    repo = build_repo(tmp_path / "ws", data)

    menu = evolve(repo.root)

    folder = run_folder(repo.root, menu["run_id"])
    state = json.loads((folder / "state.json").read_text())
    disputed = state["checkpoint"]["disputes"]
    s0_failed = {r["case_id"] for r in json.loads((folder / "evals" / "r0c0.json").read_text())["results"]
                 if not r["passed"]}
    assert set(disputed) == set(MISLABELLED) & s0_failed and disputed, "S0 fails these cases; round 1 disputes them"
    for record in disputed.values():
        assert record["round"] == 1 and record["passage"]
    n_cases = len(state["checkpoint"]["eval_case_ids"]) - len(disputed)
    for cand in state["candidates"]:
        assert cand["sets"]["selection"]["cases"] == n_cases
        for check in cand["gate_details"].get("checks", []):
            assert check.get("n", n_cases) <= n_cases
        for bp in cand["blueprints"]:
            assert not {c for ch in bp["changes"] for c in ch["case_ids"]} & set(disputed)
    for r in state["checkpoint"]["rounds"][1:]:
        assert not {c for b in r["batches"] for c in b} & set(disputed), "a disputed case is diagnosed no more"
    assert "## Disputed labels" in (folder / "report.md").read_text()
    status = CliRunner().invoke(app, ["status", "--repo", str(repo.root), "--json"])
    assert {d["case_id"] for d in json.loads(status.stdout)["disputed"]} == set(disputed)
    children = [c["id"] for c in state["candidates"] if c["parent_id"]]
    if children:
        review = CliRunner().invoke(app,
                                    ["review", "--repo", str(repo.root), f"{menu['run_id']}/{children[0]}", "--json"])
        assert {d["case_id"] for d in json.loads(review.stdout)["disputed"]} == set(disputed)

    # A person confirms the labels: the cases count again, in status and in the next run.
    path = repo.root / "cases" / "airline.yaml"
    cases = yaml.safe_load(path.read_text())
    for case in cases:
        if case["id"] in disputed:
            case["label"] = "confirmed"
    path.write_text(yaml.safe_dump(cases, sort_keys=False))
    status = CliRunner().invoke(app, ["status", "--repo", str(repo.root), "--json"])
    assert json.loads(status.stdout)["disputed"] == []
    again = evolve(repo.root, "--max-rounds", "1")
    state = json.loads((run_folder(repo.root, again["run_id"]) / "state.json").read_text())
    assert state["checkpoint"]["disputes"] == {}
    assert state["candidates"][0]["sets"]["selection"]["cases"] == len(state["checkpoint"]["eval_case_ids"])


def test_a_change_that_failed_the_gate_is_shown_to_later_diagnosers() -> None:
    checks = [CategoryCheck("baggage", 1.0, 0.5, 0.95, False),
              CategoryCheck("cancel", 1.0, 1.0, 0.95, True)]
    r = RoundRecord(round=2, child="r2c1", gate=GateRecord(GateVerdict(False, checks)))
    r.blueprints = (Blueprint("baggage", False, "", (Change('Add the rule: "Bags are free."', (), ("b-1",), (0,)),),
                              1),)
    r.diagnoses = (DiagnoserResult(1, ["b-1"], dropped=["proposal 0 for `compensation` (diagnoser 1): carries the "
                                                        "reservation id H8Q05L, which only case c-3 holds"]),)
    lessons = round_lessons("run-x", r)
    assert [(x.kind, x.skill, x.categories) for x in lessons] == [("refused", "compensation", ()),
                                                                  ("gate", "baggage", ("baggage",))]
    block = tried_section(lessons)
    assert (
        block.startswith("<tried>\n")
        and 'baggage: Add the rule: "Bags are free." — its child r2c1 failed the gate in baggage' in block
    )


def test_lessons_reach_later_runs(tmp_path: Path) -> None:
    # Diagnosers that find no cause and a rewriter that always forgets a sentence make children that
    # fix nothing and lose a rule, so with ε = 0 some child fails the gate in most seeded worlds;
    # which seeds do shifts with any prompt wording (the simulator draws from the prompt), so the
    # first of a few seeds that has one is used. The policy keeper is off: it refuses exactly the
    # rewrites that forget a policy sentence, which is how this test breaks a category.
    for seed in range(3, 9):
        # Attribution off: a sub-child that passes would turn the gate lessons into left-out ones
        # (tests/evolution/test_attribution.py).
        data = config(max_rounds=3, tolerance=0.0, patience=3, seed=seed, attribution_steps=0)
        data["evolution"]["guards"] = {"policy_sentences": False}
        data["simulator"] = {"seed": seed, "p_forget": 1.0, "p_forget_anchored": 1.0, "p_insight": 0.0,
                             "p_literal": 0.0}
        repo = build_repo(tmp_path / f"ws-{seed}", data)
        menu = evolve(repo.root)
        state = json.loads((run_folder(repo.root, menu["run_id"]) / "state.json").read_text())
        failed = [r for r in state["checkpoint"]["rounds"] if r["gate"] and not r["gate"]["passed"]]
        if failed:
            break
    assert failed, "with ε = 0 and a forgetful rewriter some child breaks a category"
    kept = json.loads((repo.root / ".frames" / "failed-changes.json").read_text())["lessons"]
    assert {(x["round"], x["kind"]) for x in kept if x["kind"] == "gate"} == {(r["round"], "gate") for r in failed}
    later = [e for e in read_exchanges(run_folder(repo.root, menu["run_id"]) / "exchanges.jsonl")
             if e["role"] == "diagnoser"
             and int(e["tag"].split("/")[0].removeprefix("round")) > min((r["round"] for r in failed), default=99)]
    for exchange in later:
        assert "<tried>" in exchange["messages"][1]["content"]
