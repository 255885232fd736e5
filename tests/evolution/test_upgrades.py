"""state.json's upgrade steps (evolution/state/upgrades.py): an old record reads as it did.

Invariants:
1. A schema-2 run recorded before the later settings existed reads with the values that gave its
   old behaviour (no retrieval, the paper's gate and rule, single set E, no guard, ...), keeps a
   `--max-rounds` given on a resume, loses its dead fields and its second copy of the settings.
2. A schema-2 run of today's settings reads with exactly those settings.
3. A damaged record is left to the record's checks, not broken by the upgrade.
4. A stopped run recorded as schema 2 resumes to the same end as the same run recorded today.
5. A schema-3 record's `seed` goes: the run's seed is its settings'.
6. A schema-4 record's round `costs` go (nothing read them); its rounds read as typed records.
7. A schema-5 record's proposals and blueprint changes, written before answers listed their rules,
   carry the rules their `Add the rule: "…"` words quoted, read once here; a contradiction none.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from frames_cli.errors import InputError, Location
from frames_cli.evolution.decide.prospective import pending_settings
from frames_cli.evolution.run.snapshot import GUARD_RULES_KEY, run_settings, run_snapshot
from frames_cli.evolution.round.record import LoopMemory
from frames_cli.evolution.state.records import SCHEMA_VERSION, RunState
from frames_cli.evolution.state.settings import Settings
from frames_cli.workspace.config import FramesConfig

from helpers.airline import EvolveRepo

RUN = "20261129-120000-abcdef"
WHERE = Location(Path("state.json"))
#: The settings every run has recorded since the first (Settings of 2026-11-29).
FIRST = {"max_rounds": 3, "patience": 2, "diagnosers": 3, "batch_size": 4, "vote_threshold": 2, "tolerance": 0.05,
         "regression_sample": 100, "anchor_cases": 2, "rewrite_retries": 1, "max_body_lines": 500, "seed": 1,
         "samples": 1}


def schema_2(evolution: dict[str, Any], resumed_to: int | None = None) -> dict[str, Any]:
    """A schema-2 state.json with `evolution` as its settings: copied into the checkpoint (with the
    rounds of a `--max-rounds` resume), with its models twice, a parent cursor and a fingerprint."""
    models = {"executor": "frames-sim/executor", "diagnoser": "frames-sim/diagnoser", "rewriter": "frames-sim/rewriter"}
    copy = {**evolution, **({"max_rounds": resumed_to} if resumed_to else {})}
    return {"run_id": RUN, "base": "a" * 40, "status": "stopped", "round": 1, "candidates": [], "front": [],
            "parent_cursor": 1, "stale_rounds": 0, "seed": evolution["seed"],
            "config": {"evolution": evolution, "models": models, "executor": {"kind": "builtin"}},
            "fingerprint": "f" * 64, "started": "2026-11-29T12:00:00+00:00",
            "checkpoint": {"settings": copy, "models": models, "eval_case_ids": ["c1"], "picks": {}, "rounds": [],
                           "pending": None},
            "schema": 2}


def test_a_run_from_before_the_later_settings_reads_with_the_values_that_gave_its_behaviour() -> None:
    state = RunState.from_json(schema_2(dict(FIRST), resumed_to=5), WHERE)

    first = {k: v for k, v in FIRST.items() if k != "regression_sample"}
    assert state.settings == Settings(
        **first,
        retrieval={"enabled": False, "top_k": 5, "min_score": 0.5, "min_shared_terms": 3, "max_changes": 200},
        gate="paper", gate_alpha=0.05,
        split={"selection": 0.0, "test": 0.0, "test_cases": None, "min_cases": 4, "seed": 0},
        merge_threshold=None, duplicate_threshold=1.0,
        guards={"case_values": False, "policy_sentences": False, "rule_form": False},
        early_rejection=True, gate_max_samples=0, attribution_steps=0,
        cost={"enabled": False, "max_failures": 1, "skills": 2},
        lost_retries=2, recommend_alpha=1.0, stage_cases=0, confirm_limit=3,
        pending={"min_new_cases": 10, "max_looks": 3},
    )
    assert state.recommend_alpha == 1.0 and pending_settings(state) == (10, 3)
    assert state.config[GUARD_RULES_KEY] == 1 and state.fingerprint is None and state.schema == SCHEMA_VERSION
    assert "parent_cursor" not in state.to_json()
    memory = LoopMemory.from_json(state.checkpoint, WHERE)
    assert memory.max_rounds == 5 and memory.eval_case_ids == ["c1"]
    assert "settings" not in state.checkpoint and "models" not in state.checkpoint
    # Its children were staged by `llm.concurrency` as read at each start: they still are.
    now = run_settings(state, memory, concurrency=6)
    assert (now.max_rounds, now.stage_cases) == (5, 6)


def test_a_run_of_todays_settings_keeps_them() -> None:
    today = run_snapshot(FramesConfig())["evolution"]
    state = RunState.from_json(schema_2({**today, "regression_sample": 100}), WHERE)

    assert state.settings == Settings.from_json(today)
    memory = LoopMemory.from_json(state.checkpoint, WHERE)
    assert memory.max_rounds is None and run_settings(state, memory, concurrency=1) == state.settings


def test_guards_recorded_before_the_rule_form_guard_keep_it_off() -> None:
    today = run_snapshot(FramesConfig())["evolution"]
    evolution = {**today, "guards": {"case_values": True, "policy_sentences": True}}

    state = RunState.from_json(schema_2(evolution), WHERE)

    assert state.settings.guards == {"case_values": True, "policy_sentences": True, "rule_form": False}


@pytest.mark.parametrize("damage", [{"config": "x"}, {"checkpoint": ["x"]}, {"config": {"evolution": "x"}},
                                    {"checkpoint": {"settings": "x"}}])
def test_a_damaged_old_record_is_left_to_the_checks(damage: dict[str, Any]) -> None:
    data = {**schema_2(dict(FIRST)), **damage}

    try:
        RunState.from_json(data, WHERE)
    except InputError as exc:  # the upgrade itself raises nothing: the record's checks say what is wrong
        assert exc.location == WHERE


def test_a_stopped_run_recorded_as_schema_2_resumes_to_the_same_end(evolve_repo: EvolveRepo, tmp_path: Path) -> None:
    from frames_cli.evolution.run.driver import EvolveOptions, evolve
    from frames_cli.workspace.layout import Workspace

    stop_file = evolve_repo.root / ".frames" / "STOP"

    def stop_in_round_two(message: object) -> None:
        if str(message).startswith("round 2:"):
            stop_file.touch()

    stopped = evolve(Workspace.open(evolve_repo.root), EvolveOptions(), on_event=stop_in_round_two).state
    assert stopped.status == "stopped"
    old = tmp_path / "old"
    shutil.copytree(evolve_repo.root, old, symlinks=True)
    path = old / ".frames" / "runs" / stopped.run_id / "state.json"
    data = json.loads(path.read_text())
    data.update(schema=2, parent_cursor=0, seed=data["config"]["evolution"]["seed"])
    data["config"]["evolution"]["regression_sample"] = 100
    data["checkpoint"].update(settings=data["config"]["evolution"], models=data["config"]["models"])
    del data["checkpoint"]["max_rounds"]
    path.write_text(json.dumps(data))

    ends = [evolve(Workspace.open(root), EvolveOptions()) for root in (evolve_repo.root, old)]

    assert all(end.resumed for end in ends)
    today, upgraded = (dataclasses.replace(end.state, started="", finished="", checkpoint={}) for end in ends)
    assert [c.to_json() for c in upgraded.candidates] == [c.to_json() for c in today.candidates]
    assert (upgraded.front, upgraded.round, upgraded.stop_reason) == (today.front, today.round, today.stop_reason)


def test_a_schema_3_records_seed_goes_and_the_run_keeps_it_in_its_settings() -> None:
    today = run_snapshot(FramesConfig(), seed=7)
    record = {**RunState(run_id=RUN, base="a" * 40, config=today).to_json(), "schema": 3, "seed": 7}

    state = RunState.from_json(record, WHERE)

    assert state.settings.seed == 7 and "seed" not in state.to_json() and state.schema == SCHEMA_VERSION


def test_a_schema_4_rounds_costs_go_and_its_rounds_read_typed() -> None:
    cost_round = {"round": 1, "parent": "r0c0", "done": ["parents", "diagnose"], "kind": "cost",
                  "note": "cost-directed: the parent fails no diagnosis-set case",
                  "blueprints": [{"skill": "s", "new_skill": False, "description": "", "votes": 0, "changes": []}],
                  "costs": [{"skill": "s", "loads": 2, "results": 2, "tokens": 10}]}
    checkpoint = {"eval_case_ids": ["a"], "split": {}, "picks": {"r0c0": 1}, "rounds": [cost_round],
                  "pending": {**cost_round, "round": 2}, "disputes": {}, "case_keys": [], "max_rounds": None}
    today = run_snapshot(FramesConfig(), seed=1)
    record = {**RunState(run_id=RUN, base="a" * 40, config=today).to_json(), "schema": 4, "checkpoint": checkpoint}

    state = RunState.from_json(record, WHERE)
    memory = LoopMemory.from_json(state.checkpoint, WHERE)

    assert "costs" not in state.checkpoint["rounds"][0] and "costs" not in state.checkpoint["pending"]
    assert memory.rounds[0].blueprints[0].skill == "s" and memory.pending is not None and memory.pending.round == 2
    assert memory.to_json()["rounds"][0] == {**state.checkpoint["rounds"][0], "batches": [], "diagnoses": [],
                                             "rejected": {}, "outcomes": [], "child": None, "gate": None,
                                             "batching": "", "attribution": []}


def test_a_schema_5_records_proposals_and_changes_get_the_rules_they_quoted() -> None:
    from frames_cli.evolution.propose.consensus import Blueprint
    from frames_cli.evolution.propose.diagnose import DiagnoserResult
    from frames_cli.evolution.state.upgrades import upgrade

    today = run_snapshot(FramesConfig(), seed=1)
    record = RunState(run_id=RUN, base="a" * 40, config=today).to_json()
    proposal = {"diagnoser": 0, "position": 0, "skill": "baggage", "change": 'Add the rule: "A." Add the rule: "B."',
                "rationale": "why", "case_ids": ["c1"], "new_skill": False, "description": ""}
    removal = {**proposal, "position": 1, "change": 'Remove "Old rule."'}
    changes = [{"change": 'Add the rule: "A."', "rationales": ["why"], "case_ids": ["c1"], "diagnosers": [0]},
               {"change": "The diagnosers contradict each other.", "rationales": [], "case_ids": ["c1"],
                "diagnosers": [0, 1], "wordings": ["A.", "Not A."], "conflict": "one forbids what the other asks"}]
    blueprint = {"skill": "baggage", "new_skill": False, "description": "", "votes": 2, "changes": changes}
    diagnosis = {"diagnoser": 0, "case_ids": ["c1"], "proposals": [proposal, removal], "dropped": [], "error": None}
    round_1 = {"round": 1, "parent": "r0c0", "diagnoses": [diagnosis], "blueprints": [blueprint]}
    record["checkpoint"] = {"eval_case_ids": ["c1"], "picks": {}, "rounds": [round_1], "pending": None}
    record["candidates"] = [{"id": "r1c1", "blueprints": [blueprint]}]

    upgraded = upgrade({**record, "schema": 5}, SCHEMA_VERSION)

    (round_,) = upgraded["checkpoint"]["rounds"]
    results = [DiagnoserResult.from_json(d) for d in round_["diagnoses"]]
    assert [p.rules for p in results[0].proposals] == [("A.", "B."), ()]
    for bp in (round_["blueprints"][0], upgraded["candidates"][0]["blueprints"][0]):
        assert [c.rules for c in Blueprint.from_json(bp).changes] == [("A.",), ()]
