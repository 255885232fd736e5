"""A pending review branch judged on cases added after its run (evolution/decide/prospective.py), end to end
on the simulator: the run draws fresh samples, writes results.jsonl, and a later `frames evolve`
looks at the branch once enough new cases are in."""

from __future__ import annotations

import copy
import json
from collections import Counter

import yaml
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.evolution.compare.evidence import Confirmation, Recommendation, Tally
from frames_cli.evolution.compare.verdict import CaseOutcome
from frames_cli.evolution.decide.prospective import decide_look
from frames_cli.evolution.decide.recorded import RecordedRun, recommend_recorded

from helpers.airline import CONFIG, RULES, build_repo


def side(*passes: bool, prefix: str) -> dict[str, CaseOutcome]:
    return {f"{prefix}{i}": CaseOutcome("x", (p,)) for i, p in enumerate(passes)}


PENDING = Recommendation("r1c1", "pending", 0.05,
                         (Confirmation("r1c1", 0.9, True, Tally(2, 1, 0, 0.5), Tally(10, 8, 0, 0.004), 0.002, True),))
UNSEEN = (side(False, True, prefix="u"), side(True, True, prefix="u"))


def test_a_look_confirms_withdraws_waits_or_gives_up():
    fixed = (side(*[False] * 6, prefix="n"), side(*[True] * 6, prefix="n"))
    after = decide_look(PENDING, UNSEEN, fixed, 1, 3)
    # 7 of 7 changed unseen and new cases fixed: p = 1/128 ≤ 0.05 / 3.
    assert after.status == "final" and after.looks[-1]["p_gain"] == 1 / 128 and after.looks[-1]["level"] == 0.05 / 3
    broken = (side(*[True] * 6, prefix="n"), side(*[False] * 6, prefix="n"))
    assert decide_look(PENDING, UNSEEN, broken, 1, 3).status == "withdrawn"
    even = (side(True, False, prefix="n"), side(False, True, prefix="n"))
    waited = decide_look(PENDING, UNSEEN, even, 1, 3)
    assert waited.status == "pending" and len(waited.looks) == 1
    assert decide_look(decide_look(waited, UNSEEN, even, 1, 3), UNSEEN, even, 1, 3).status == "unconfirmed"
    assert "look 1: 2 new cases" in waited.words()


def evolve(root, *args):
    result = CliRunner().invoke(app, ["evolve", "--repo", str(root), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_an_in_sample_gain_waits_for_new_cases_and_a_later_run_looks_at_it(tmp_path):
    config = copy.deepcopy(CONFIG)
    config["evolution"]["recommend_alpha"] = 0.05
    repo = build_repo(tmp_path / "ws", config)
    first = evolve(repo.root)
    rec = first["recommendation"]
    # Every case of the single set E was diagnosed: the gain can only be in-sample, on fresh samples.
    assert rec["status"] == "pending" and first["best"] == rec["member"] and first["branch"]
    assert rec["steps"][0]["fresh"]["fixed"] > 0 and rec["steps"][0]["unseen"]["cases"] == 0
    folder = repo.root / ".frames" / "runs" / first["run_id"]
    assert (folder / "evals" / "r0c0-fresh.json").is_file()
    # The run's own results.jsonl, read back, gives the run's recommendation.
    recorded = recommend_recorded(RecordedRun.read(folder / "results.jsonl"))
    assert (recorded.member, recorded.status, recorded.lacks) == (rec["member"], "pending", ())
    assert (folder / "report.md").read_text().splitlines()[2].startswith(f"Pass rate S0 40.9% → {rec['member']}")

    status = json.loads(CliRunner().invoke(app, ["status", "--repo", str(repo.root), "--json"]).stdout)
    assert [(p["run_id"], p["new_cases"], p["needed"]) for p in status["pending_branches"]] == [
        (first["run_id"], 0, 10)
    ]

    later = [{"id": f"new-{i}", "category": category, "source": {"kind": "test", "ref": f"rule {i}"},
              "created": "2026-12-02",
              "task": {"input": {"text": "Hello, " + question}, "expected": answer, "check": {"kind": "exact"},
                       "answer_format": "yes or no"},
              "diagnosis": {"symptom": "wrong answer", "evidence": [evidence]}}
              for i, (category, evidence, question, answer) in enumerate(RULES)]
    (repo.root / "cases" / "later.yaml").write_text(yaml.safe_dump(later, sort_keys=False))
    # The look draws the run's k samples of each new case: a record that says k = 2 gets two (the
    # run itself drew one, so its unseen cases, with fewer than k samples, count for nothing here).
    record = json.loads((folder / "state.json").read_text())
    record["config"]["evolution"]["samples"] = 2
    (folder / "state.json").write_text(json.dumps(record))
    repo.git("add", "cases")
    repo.git("commit", "-q", "-m", "cases from last week")
    second = CliRunner().invoke(app, ["evolve", "--repo", str(repo.root)])
    assert second.exit_code == 0, second.output
    assert f"looking at pending branch {first['branch']}" in second.stderr
    state = json.loads((folder / "state.json").read_text())
    look = state["recommendation"]["looks"][0]
    assert look["new_cases"] == len(RULES) and look["status"] == state["recommendation"]["status"]
    assert look["status"] in ("final", "pending", "withdrawn") and (folder / "look-1" / "ledger.json").is_file()
    drawn = json.loads((folder / "look-1" / "r0c0.json").read_text())["results"]
    assert Counter(r["sample"] for r in drawn) == {0: len(RULES), 1: len(RULES)}
    said = (
        "confirmed on cases no diagnoser saw (look 1)"
        if look["status"] == "final"
        else f"look 1: {len(RULES)} new cases"
    )
    assert said in (folder / "report.md").read_text().splitlines()[2]


def test_new_cases_are_neither_renamed_cases_of_the_run_nor_sealed_ones(tmp_path):
    from frames_cli.evolution.decide.prospective import held_case_keys, new_cases
    from frames_cli.evolution.state.records import RunState
    from frames_cli.formats.case_files import load_cases

    from helpers.airline import make_cases

    raw = make_cases()
    held = sorted(c["id"] for c in raw)[:6]
    renamed = {**next(c for c in raw if c["id"] == held[0]), "id": "v2-" + held[0]}
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([*raw, renamed], sort_keys=False))
    later = {c.id: c for c in load_cases([tmp_path / "cases.yaml"])}
    cases = {cid: c for cid, c in later.items() if cid != renamed["id"]}
    state = RunState("20261202-120000-aaaaaa", "a" * 40,
                     checkpoint={"split": {"diagnosis": held[:3], "selection": held[3:]},
                                                                    "case_keys": held_case_keys(cases, held)})
    renamed = later[renamed["id"]]
    fresh = sorted(set(cases) - set(held))
    assert new_cases(state, later) == fresh  # the renamed case has a diagnosed case's content
    assert new_cases(state, later, sealed=fresh[:2]) == fresh[2:]
    state.checkpoint.pop("case_keys")  # a run recorded before frames kept the keys: ids alone
    assert renamed.id in new_cases(state, later)
