"""Recorded runs (evolution/decide/recorded.py): the real-model recordings in bench/data/ through the
recommendation rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.errors import InputError
from frames_cli.evolution.decide.recorded import RecordedRun, recommend_recorded, sealed_change

RUNS = Path(__file__).resolve().parents[2] / "bench" / "data" / "real-model-runs"


def test_the_thin_airline_run_gives_its_best_in_sample_child_a_final_branch():
    run = RecordedRun.read(RUNS / "2026-12-02-airline-thin" / "results.jsonl")
    rec = recommend_recorded(run)
    # r3c1 has the highest diagnosis-set rate (91.7 %) and fixed 5 of the 6 unseen selection cases, breaking none.
    assert (rec.member, rec.status, [s.member for s in rec.steps]) == ("r3c1", "final", ["r3c1"])
    assert rec.steps[0].unseen.p == pytest.approx(1 / 32)
    assert sealed_change(run, rec.member) == pytest.approx(30.0)
    assert rec.lacks == ("fresh samples of the 14 diagnosed selection cases (decided on the 6 unseen ones)",)


def test_the_full_airline_run_gives_no_branch():
    run = RecordedRun.read(RUNS / "2026-12-02-airline-full" / "results.jsonl")
    rec = recommend_recorded(run)
    assert (rec.member, rec.status) == (None, "none") and rec.steps[0].unseen.p == 0.5
    assert sealed_change(run, rec.member) == 0.0


@pytest.mark.parametrize("line, message", [
    ("{", "not JSON"),
    ('{"candidate": "r0c0"}', "needs the keys"),
    ('{"candidate": "r0c0", "set": "train", "case_id": "a", "passed": true, "category": "x"}', "unknown set 'train'"),
    ('{"candidate": "r1c1", "set": "test", "case_id": "a", "passed": true, "category": "x"}', "no result of S0"),
])
def test_a_bad_results_file_is_named_with_its_line(tmp_path, line, message):
    path = tmp_path / "results.jsonl"
    path.write_text("\n" + line + "\n")
    with pytest.raises(InputError) as err:
        RecordedRun.read(path)
    assert message in err.value.message and (err.value.location.line in (2, None))


def test_a_run_recorded_with_its_fresh_samples_replays_its_own_recommendation():
    run = RecordedRun.read(RUNS / "2026-12-02-airline-thin-rerun-2" / "results.jsonl")
    rec = recommend_recorded(run)
    # The run said: r1c1 (final), 5 of 5 unseen fixed and 3 of 3 diagnosed cases on fresh samples.
    step = rec.steps[0]
    assert (rec.member, rec.status, rec.lacks) == ("r1c1", "final", ())
    assert (step.unseen.fixed, step.unseen.broken, step.fresh.fixed, step.fresh.broken,
            step.fresh.cases) == (5, 0, 3, 0, 13)
    assert step.p == pytest.approx(1 / 256) and sealed_change(run, "r1c1") == 0.0
