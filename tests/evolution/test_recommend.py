"""The recommendation in words (evolution/decide/recommend.py): the menu, the reports' first line,
review and promote."""

from __future__ import annotations

import json

from frames_cli.evolution.compare.evidence import Confirmation, Recommendation, Tally
from frames_cli.evolution.decide.recommend import against, declined, headline, member_line, recommendation_note
from frames_cli.evolution.state.records import SCHEMA_VERSION, Candidate, RunState
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.evolution.run.snapshot import run_snapshot
from frames_cli.errors import Location
from frames_cli.workspace.config import FramesConfig, with_overrides

RUN = "20261201-090000-aaaaaa"
SPLIT = {"diagnosis": [f"d{i}" for i in range(24)],
         "selection": [f"d{i}" for i in range(14)] + [f"u{i}" for i in range(6)]}


def _run(alpha: float, *children: tuple[str, float, bool]) -> RunState:
    config = run_snapshot(with_overrides(FramesConfig(), "evolution", recommend_alpha=alpha))
    state = RunState(RUN, "a" * 40, status="finished", config=config)
    state.checkpoint = {"split": SPLIT}
    state.candidates.append(Candidate(BASE_ID, "a" * 40, None, 0, 0.40, {}, 100.0, case_counts={"x": 20}))
    for i, (cid, rate, gate) in enumerate(children):
        state.candidates.append(Candidate(cid, f"{i + 1:x}" * 40, BASE_ID, 1, rate, {}, 100.0 + i, gate_passed=gate,
                                          gain_p=0.03))
    state.front = [c.id for c in state.candidates if c.parent_id is None or c.gate_passed]
    return state


def _confirmed(member: str, unseen_p: float, p: float) -> Confirmation:
    return Confirmation(member, 0.9, True, Tally(6, 5, 0, unseen_p), Tally(14, 6, 1, p), p, p <= 0.05)


def test_a_final_branch_states_the_gain_and_its_evidence_in_the_first_line():
    state = _run(0.05, ("r1c1", 0.65, True), ("r2c1", 0.90, True))
    state.recommendation = Recommendation("r2c1", "final", 0.05, (_confirmed("r2c1", 0.031, 0.001),)).to_json()
    state.branch = f"frames/{RUN}"
    assert state.best().id == "r2c1"
    assert headline(state) == (f"S0 40.0% → r2c1 90.0% (+50.0 pt on the selection set, n=20): 5 of 5 changed unseen "
                               f"cases fixed (p = 0.031); diagnosed cases on fresh samples: 6 fixed, 1 broken of 14 "
                               f"cases; significant; review branch frames/{RUN} (final)")
    assert "on the 6 selection cases no diagnoser saw" in recommendation_note(state)
    assert member_line(state, state.candidate("r2c1")).startswith("recommended (final): 5 of 5 changed unseen cases "
                                                                  "fixed")
    assert (
        member_line(state, state.candidate("r1c1"))
        == "not recommended (the run recommends r2c1); this member: not tested"
    )
    assert against(state, state.candidate("r2c1")) is None
    assert against(state, state.candidate("r1c1")).startswith("this goes against the run's recommendation (r2c1)")
    assert not declined(state)


def test_no_branch_still_shows_the_gain_the_table_shows():
    state = _run(0.05, ("r1c1", 0.65, True), ("r2c1", 0.90, True))
    state.recommendation = Recommendation(None, "none", 0.05, (_confirmed("r2c1", 0.5, 0.2),)).to_json()
    assert state.best().id == BASE_ID and declined(state)
    line = headline(state)
    assert line.startswith("S0 40.0% → r2c1 90.0% (+50.0 pt") and "not distinguishable from noise (r2c1:" in line
    assert line.endswith("; no review branch")
    assert "S0 stays the recommendation" in recommendation_note(state)
    assert against(state, state.candidate("r2c1")).startswith("this goes against the run's recommendation (S0); r2c1's "
                                                              "evidence: 5 of 5 changed")


def test_a_pending_branch_says_in_sample_only_and_promote_says_so():
    state = _run(0.05, ("r1c1", 0.90, True))
    state.recommendation = Recommendation("r1c1", "pending", 0.05, (_confirmed("r1c1", 0.5, 0.001),)).to_json()
    assert state.best().id == "r1c1"
    assert "in-sample only: review with care" in headline(state)
    assert against(state, state.candidate("r1c1")).startswith("r1c1 is recommended, but in-sample only")
    withdrawn = Recommendation("r1c1", "withdrawn", 0.05, (_confirmed("r1c1", 0.5, 0.001),)).to_json()
    state.recommendation = withdrawn
    assert state.best().id == BASE_ID and headline(state).endswith("no review branch")


def test_the_papers_rule_and_an_undecided_run():
    state = _run(1.0, ("r1c1", 0.45, True), ("r2c1", 0.50, True))
    assert state.best().id == "r2c1"
    assert against(state, state.candidate("r1c1")).endswith("(r2c1, the highest pass rate on the front: the paper's "
                                                            "rule)")
    running = _run(0.05, ("r1c1", 0.45, True))
    running.status = "running"
    assert running.best().id == BASE_ID and recommendation_note(running) is None
    assert "has not decided the recommendation yet" in headline(running)
    assert against(running, running.candidate("r1c1")).startswith("the run has not decided")


def test_a_schema_1_state_keeps_the_verdict_it_was_made_with(tmp_path):
    state = _run(0.05, ("r1c1", 0.65, True), ("r2c1", 0.90, True))
    data = state.to_json()
    data["schema"] = 1
    data.pop("recommendation")
    data["candidates"][1]["gain_p"], data["candidates"][2]["gain_p"] = 0.02, 0.03  # bar 0.05 / 2 = 0.025
    old = RunState.from_json(json.loads(json.dumps(data)), Location(tmp_path / "state.json"))
    assert old.schema == SCHEMA_VERSION and old.best().id == "r1c1"
    assert old.recommended().words().startswith("recorded before frames kept the evidence: p = 0.02")


def test_a_recommended_member_off_the_front_is_named_in_the_menu_notes():
    from frames_cli.evolution.report.menu import MenuRow, menu_notes

    state = _run(0.05, ("r1c1", 0.90, True), ("r2c1", 0.90, True))
    state.candidates[2].mean_tokens = 50.0  # the cost-directed sibling: same rate, fewer tokens
    state.front = [BASE_ID, "r2c1"]
    state.recommendation = Recommendation("r1c1", "final", 0.05, (_confirmed("r1c1", 0.031, 0.004),)).to_json()
    rows = [MenuRow(c, [], 0, c.id == "r1c1") for c in state.candidates]
    notes = menu_notes(state, rows)
    assert any(n.startswith("r1c1 ★ is shown although it is off the front (dominated by r2c1") for n in notes)
