"""Run records: the state.json schema round trip, its refusals, run listing and candidate lookup."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from frames_cli.errors import InputError
from frames_cli.evolution.run.snapshot import run_snapshot
from frames_cli.evolution.state import records
from frames_cli.evolution.state.records import Candidate, FailureNote, RunState
from frames_cli.evolution.state.run_ids import BASE_ID, candidate_ref, check_run_id, new_run_id, review_branch
from frames_cli.evolution.state.runs import find_candidate, list_runs, load_run, read_state, save_state
from frames_cli.gitstore.names import check_ref_name
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.config import FramesConfig, with_overrides
from frames_cli.workspace.layout import Workspace

RUN_A = "20261128-090000-aaaaaa"
RUN_B = "20261129-090000-bbbbbb"
#: The settings of a run under the paper's rule (★ is the front member of the highest pass rate).
PAPERS_RULE = run_snapshot(with_overrides(FramesConfig(), "evolution", recommend_alpha=1.0))


def _state(run_id: str, base: str, child_commit: str, *, child_rate: float = 0.75) -> RunState:
    base_cand = Candidate(BASE_ID, base, None, 0, 0.5, {"cancel": 0.5, "refund": 0.5}, 120.0, 0.01)
    child = Candidate(
        "r1c1",
        child_commit,
        BASE_ID,
        1,
        child_rate,
        {"cancel": 1.0, "refund": 0.5},
        110.0,
        0.009,
        gate_passed=True,
        gate_details={"passed": True, "tolerance": 0.05, "checks": []},
        changed_skills=["alpha"],
        blueprints=[{"skill": "alpha", "new_skill": False, "description": "", "votes": 2, "changes": []}],
        motivating_case_ids=["c1"],
        failures=[FailureNote("c1", "cancel", "expected 'yes', got 'no'", "refused a valid cancel")],
        diff_size=3,
        votes_needed=2,
        diagnosers=3,
    )
    # Started when its id says, as a run made by `frames evolve` is.
    started = datetime.strptime(run_id[:15], "%Y%m%d-%H%M%S").replace(tzinfo=UTC).isoformat()
    return RunState(run_id, base, status="finished", round=1, candidates=[base_cand, child], front=["r1c1"],
                    spend_tokens=900, started=started, config=PAPERS_RULE)


def test_run_ids():
    run_id = new_run_id(datetime(2026, 11, 29, 10, 15, 2, tzinfo=UTC))
    assert run_id.startswith("20261129-101502-") and check_run_id(run_id) == run_id
    assert new_run_id() != new_run_id()
    for bad in ["../x", "20261129-101502", "20261129-101502-ABCDEF", "20261129-101502-abcdef/.."]:
        with pytest.raises(InputError):
            check_run_id(bad)
    assert check_ref_name(candidate_ref(RUN_A, "r2c1")) == f"refs/frames/runs/{RUN_A}/r2c1"
    assert check_ref_name(f"refs/heads/{review_branch(RUN_A)}")
    with pytest.raises(InputError):
        candidate_ref(RUN_A, "../../heads/main")


def test_state_round_trip_through_disk(tmp_path):
    ws = Workspace(tmp_path)
    state = _state(RUN_A, "a" * 40, "b" * 40)
    state.checkpoint = {"stage": "evaluate", "pending": ["r2c1"]}
    path = save_state(ws, state)
    assert path == tmp_path / ".frames" / "runs" / RUN_A / "state.json"
    assert read_state(path) == state
    assert json.loads(path.read_text())["schema"] == records.SCHEMA_VERSION


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(schema=99), "newer than this frames"),
        (lambda d: d.pop("base"), "missing keys base"),
        (lambda d: d.update(surprise=1), "unknown keys surprise"),
        (lambda d: d.update(status="paused"), "bad status"),
        (lambda d: d.update(run_id="../../etc"), "bad run id"),
        (lambda d: d.update(front=["r9c9"]), "no candidate 'r9c9'"),
        (lambda d: d.update(round=True), "RunState.round"),
        (lambda d: d["candidates"][1].update(pass_rate="high"), "Candidate.pass_rate"),
        (lambda d: d["candidates"][1].update(id="best"), "bad candidate id"),
        (lambda d: d["candidates"][1]["failures"][0].pop("reason"), "FailureNote: missing keys reason"),
        (lambda d: d.update(candidates={}), "RunState.candidates"),
    ],
)
def test_state_refusals_name_the_file(tmp_path, edit, message):
    data = _state(RUN_A, "a" * 40, "b" * 40).to_json()
    edit(data)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=message) as info:
        read_state(path)
    assert str(path) in str(info.value)


def test_keys_with_defaults_may_be_absent(tmp_path):
    """A state written before a field existed still loads: fields are only added with defaults."""
    data = _state(RUN_A, "a" * 40, "b" * 40).to_json()
    for key in ("failures", "blueprints", "dropped", "diagnosers"):
        del data["candidates"][1][key]
    for key in ("checkpoint", "branch", "spend_usd"):
        del data[key]
    path = tmp_path / "state.json"
    path.write_text(json.dumps(data))
    state = read_state(path)
    assert (state.candidates[1].failures, state.candidates[1].blueprints, state.checkpoint,
            state.branch) == ([], [], {}, None)
    del data["candidates"]
    data["front"] = []
    path.write_text(json.dumps(data))
    assert read_state(path).candidates == []


def test_bad_json_names_file_and_line(tmp_path):
    path = tmp_path / "state.json"
    path.write_text('{\n  "run_id": "x",\n  oops\n}')
    with pytest.raises(InputError) as info:
        read_state(path)
    assert str(info.value).startswith(f"{path}:3: not valid JSON")


def test_best_breaks_ties_by_tokens_then_age():
    state = _state(RUN_A, "a" * 40, "b" * 40)
    twin = Candidate("r1c2", "c" * 40, BASE_ID, 1, 0.75, {}, 100.0)
    late_twin = Candidate("r2c1", "d" * 40, "r1c2", 2, 0.75, {}, 100.0)
    state.candidates += [twin, late_twin]
    state.front = ["r1c1", "r2c1", "r1c2"]
    assert state.best().id == "r1c2"
    assert state.base_candidate().id == BASE_ID
    assert RunState(RUN_A, "a" * 40, config=PAPERS_RULE).best() is None


def test_list_runs_and_damaged_runs(tmp_path):
    ws = Workspace(tmp_path)
    assert list_runs(ws) == []
    save_state(ws, _state(RUN_B, "a" * 40, "c" * 40, child_rate=0.9))
    save_state(ws, _state(RUN_A, "a" * 40, "b" * 40))
    summaries = list_runs(ws)
    assert [(s.run_id, s.status, s.rounds, s.candidates, s.best_pass_rate, s.base_pass_rate) for s in summaries] == [
        (RUN_A, "finished", 1, 1, 0.75, 0.5),
        (RUN_B, "finished", 1, 1, 0.9, 0.5),
    ]
    damaged = ws.runs_dir / "20261130-000000-cccccc" / "state.json"
    damaged.parent.mkdir()
    damaged.write_text("{")
    with pytest.raises(InputError, match="not valid JSON"):
        list_runs(ws)
    problems = []
    assert [s.run_id for s in list_runs(ws, problems)] == [RUN_A, RUN_B]
    assert [str(p.location.path) for p in problems] == [str(damaged)]
    with pytest.raises(InputError, match=f"no run 20261201-000000-dddddd .*{RUN_A}"):
        load_run(ws, "20261201-000000-dddddd")


def test_find_candidate(git_repo):
    ws = Workspace(git_repo.root)
    store = GitStore(git_repo.root)
    base = store.resolve("HEAD")
    old = store.commit_files(base, {"skills/alpha/SKILL.md": b"old\n"}, "old child")
    new = store.commit_files(base, {"skills/alpha/SKILL.md": b"new\n"}, "new child")
    stray = store.commit_files(base, {"skills/alpha/SKILL.md": b"stray\n"}, "not a candidate")
    with pytest.raises(InputError, match="no runs yet"):
        find_candidate(ws, "r1c1", store)
    save_state(ws, _state(RUN_A, base, old))
    save_state(ws, _state(RUN_B, base, new))
    assert find_candidate(ws, "r1c1", store)[0].run_id == RUN_B
    state, cand = find_candidate(ws, f"{RUN_A}/r1c1", store)
    assert (state.run_id, cand.commit) == (RUN_A, old)
    assert find_candidate(ws, old[:10], store)[1].commit == old
    assert find_candidate(ws, base, store)[1].id == BASE_ID
    for spec, message in [("r7c7", "no run has"), (f"{RUN_A}/r7c7", "has no candidate"), ("nonsense", "neither"),
                          (stray, "not a candidate of any run")]:
        with pytest.raises(InputError, match=message):
            find_candidate(ws, spec, store)
