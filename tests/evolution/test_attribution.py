"""Attribution: a child that failed the gate is cut down to the rewrites no broken case loaded.

The world is built for the test, so no seeded draw decides the outcome: the simulated executor
answers right exactly when its loaded skills state its case's rule (floor 0, ceiling 1), and the
skills share no word, so each case loads only the skill of its topic. The diagnoser and rewriter
are scripted through litellm's real provider path: every diagnoser proposes a rule for `seating`
and one for `luggage`; the `seating` rewrite adds the rule the failing seating cases need, the
`luggage` rewrite adds its rule but drops the one the passing luggage cases need.

Invariants:
1. The child r1c1 changes both skills and fails the gate in `luggage` only.
2. Attribution names `luggage` as the implicated rewrite, by exactly the luggage cases that went
   from pass to fail, which loaded it and not `seating`.
3. The sub-child r1c2 (parent + the `seating` rewrite) is evaluated, passes the gate, is committed
   under the run's refs and is on the front; its commit message and `frames review` name the
   rewrite left out and its cases.
4. The left-out rewrite is a lesson: later diagnosers see it in `<tried>` and the next rewriter of
   `luggage` sees it with its broken cases.
5. `attribution_steps: 0` makes no sub-child.
6. With early rejection on (the default) the child is rejected before its seating cases run;
   attribution works from the cases it has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from frames_cli.evolution.round.attribution import (
    Attribution,
    attribute,
    catalog_changes,
    dominated_categories,
    loaded_skills,
)
from frames_cli.evolution.round.record import AttributionRecord, GateRecord, RoundRecord, round_lessons
from frames_cli.evolution.compare.verdict import CaseOutcome, CategoryCheck, GateVerdict
from frames_cli.evolution.propose.consensus import Blueprint, Change
from frames_cli.evolution.propose.lessons import left_out_notes
from helpers import init_git_repo, install_scripted, remove_scripted

SEATING_KEPT = "Window seats are assigned at online booking time."
SEATING_NEW = "Exit row seating requires passengers aged fifteen or older."
LUGGAGE_KEPT = "Gold members receive three complimentary checked suitcases."
LUGGAGE_NEW = "Oversized suitcases incur surcharges above thirty kilograms."

SKILLS = {
    "seating": ("Window aisle exit row seat assignment rules.", f"# Seating\n\n- {SEATING_KEPT}\n"),
    "luggage": ("Checked suitcase allowance and surcharges by membership.", f"# Luggage\n\n- {LUGGAGE_KEPT}\n"),
}

#: (id, category, question, evidence): S0 states the rule of l0, l1, l4, and not of s0, s1, s2, l2, l3.
#: S0 passes no seating case, so early rejection runs that category last (its floor is 0).
CASES = [
    ("s0", "seating", "May a passenger aged fourteen sit in the exit row?", SEATING_NEW),
    ("s1", "seating", "Can my son, aged twelve, take an exit row seat?", SEATING_NEW),
    ("s2", "seating", "Does exit row seating need passengers older than fifteen?", SEATING_NEW),
    ("l0", "luggage", "As a gold member, is my third checked suitcase complimentary?", LUGGAGE_KEPT),
    ("l1", "luggage", "Do gold members get three complimentary checked suitcases?", LUGGAGE_KEPT),
    ("l2", "luggage", "Is there a surcharge for my oversized suitcase of forty kilograms?", LUGGAGE_NEW),
    ("l3", "luggage", "Do oversized suitcases above thirty kilograms incur surcharges?", LUGGAGE_NEW),
    ("l4", "luggage", "Are three checked suitcases complimentary for gold members?", LUGGAGE_KEPT),
]


def quoted(rule: str) -> str:
    return f'Add the rule: "{rule}"'


class Scripted:
    """Diagnoser and rewriter answers that make the situation; every prompt is kept."""

    def __init__(self) -> None:
        from litellm.llms.custom_llm import CustomLLM

        from frames_cli.llm.transport.providers import make_response
        from frames_cli.sim import reading

        outer = self
        self.prompts: list[tuple[str, str]] = []

        class Handler(CustomLLM):
            def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
                prompt = "\n\n".join(m["content"] for m in messages)
                outer.prompts.append((model, prompt))
                answer = outer.diagnose(prompt, reading) if model == "diagnoser" else outer.rewrite(prompt, reading)
                return make_response(f"scripted/{model}", json.dumps(answer), "stop", 100, 20)

        self.handler = Handler()

    @staticmethod
    def diagnose(prompt: str, reading: Any) -> dict:
        ids = [f["case_id"] for f in reading.json_after(prompt, "Failures")]
        return {"proposals": [
            {"skill": "seating", "change": quoted(SEATING_NEW), "rules": [SEATING_NEW],
             "rationale": "Exit row age rule missing.", "case_ids": ids},
            {"skill": "luggage", "change": quoted(LUGGAGE_NEW), "rules": [LUGGAGE_NEW],
             "rationale": "Oversize surcharge rule missing.", "case_ids": ids},
        ]}

    @staticmethod
    def rewrite(prompt: str, reading: Any) -> dict:
        target = next(b for b in reading.skill_blocks(prompt) if b.attrs.get("target") == "true")
        if target.name == "seating":
            return {"body": target.text.rstrip("\n") + f"\n- {SEATING_NEW}\n"}
        # The luggage rewrite adds its rule and loses the one the passing cases need.
        kept = [line for line in target.text.splitlines() if LUGGAGE_KEPT not in line]
        return {"body": "\n".join(kept).rstrip("\n") + f"\n- {LUGGAGE_NEW}\n"}

    def rewriter_prompts(self, skill: str) -> list[str]:
        return [p for m, p in self.prompts if m == "rewriter" and f"Target skill `{skill}`" in p]


@pytest.fixture
def scripted():
    provider = Scripted()
    install_scripted(provider.handler)
    yield provider
    remove_scripted()


def build(root: Path, **evolution: Any):
    # batch_size "all": every diagnoser sees every failure, so each of its two rules cites a case it
    # is about (the proposal guard drops a rule that shares no word with the cases it cites).
    config = {
        "models": {"executor": "frames-sim/executor", "judge": "frames-sim/judge", "diagnoser": "scripted/diagnoser",
                   "rewriter": "scripted/rewriter"},
        "llm": {"concurrency": 2, "max_retries": 0, "backoff_base_s": 0.0},
        "evolution": {"max_rounds": 1, "patience": 3, "diagnosers": 2, "batch_size": "all", "vote_threshold": 2,
                      "tolerance": 0.0,
                      "anchor_cases": 0, "rewrite_retries": 0, "split": {"selection": 0, "test": 0}, **evolution},
        "simulator": {"floor": 0.0, "ceiling": 1.0, "p_forget": 0.0, "p_forget_anchored": 0.0, "p_verbose": 0.0},
    }
    repo = init_git_repo(root)
    for name, (description, body) in SKILLS.items():
        repo.write(f"skills/{name}/SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    cases = [
        {"id": cid, "category": cat, "source": {"kind": "test", "ref": cid}, "created": "2026-12-01",
         "task": {"input": {"text": q}, "expected": "yes", "check": {"kind": "exact"}, "answer_format": "yes or no"},
         "diagnosis": {"symptom": "wrong answer", "evidence": [evidence]}}
        for cid, cat, q, evidence in CASES
    ]
    repo.write("cases/air.yaml", yaml.safe_dump(cases, sort_keys=False))
    repo.write("frames.yaml", yaml.safe_dump(config, sort_keys=False))
    repo.write(".gitignore", ".frames/\n")
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "world")
    return repo


def evolve(root: Path) -> dict:
    from frames_cli.commands.app import app

    result = CliRunner().invoke(app, ["evolve", "--repo", str(root), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def load_state(root: Path, run_id: str) -> dict:
    return json.loads((root / ".frames" / "runs" / run_id / "state.json").read_text())


def test_the_sub_child_without_the_breaking_rewrite_joins_the_front(tmp_path: Path, scripted: Scripted) -> None:
    repo = build(tmp_path / "ws", max_rounds=2)
    run_id = evolve(repo.root)["run_id"]
    state = load_state(repo.root, run_id)
    cands = {c["id"]: c for c in state["candidates"]}
    child, sub = cands["r1c1"], cands["r1c2"]
    # 1. the child changed both skills and broke luggage only
    assert child["changed_skills"] == ["luggage", "seating"] and not child["gate_passed"]
    assert [c["category"] for c in child["gate_details"]["checks"] if not c["passed"]] == ["luggage"]
    # 2. attribution: luggage, by the luggage cases that went pass -> fail and loaded it
    results = json.loads((repo.root / ".frames" / "runs" / run_id / "evals" / "r1c1.json").read_text())["results"]
    loads = loaded_skills(results)
    step = state["checkpoint"]["rounds"][0]["attribution"][0]
    assert step["child"] == "r1c1" and step["why"] == "gate"
    assert step["implicated"] == {"luggage": ["l0", "l1", "l4"]}
    assert all("luggage" in loads[c] and "seating" not in loads[c] for c in ("l0", "l1", "l4"))
    assert step["sub_child"] == "r1c2" and child["attribution"]["sub_child"] == "r1c2"
    # early rejection (on by default) stopped the child once luggage could not reach its floor:
    # attribution used only the cases it has, and the sub-child went through the same evaluation
    early = child["gate_details"]["early_stop"]
    assert early["skipped"] and {r["case_id"] for r in results}.isdisjoint(early["skipped"])
    assert "early_stop" not in sub["gate_details"]
    # 3. the sub-child: seating rewrite only, gated, committed, on the front
    assert (
        sub["changed_skills"] == ["seating"]
        and sub["cut_from"] == "r1c1"
        and sub["left_out"] == {"luggage": ["l0", "l1", "l4"]}
    )
    assert sub["gate_passed"] and sub["per_category"] == {"luggage": 3 / 5, "seating": 1.0}
    assert "r1c2" in state["front"]
    assert repo.git("rev-parse", f"refs/frames/runs/{run_id}/r1c2") == sub["commit"]
    assert repo.git("rev-parse", f"refs/frames/runs/{run_id}/front/r1c2") == sub["commit"]
    message = repo.git("log", "-1", "--format=%B", sub["commit"])
    assert "(r1c1 without luggage)" in message.splitlines()[0]
    assert "- luggage: rewrite left out; implicated by l0, l1, l4" in message
    assert f"- {LUGGAGE_KEPT}" in repo.git("show", f"{sub['commit']}:skills/luggage/SKILL.md")
    from frames_cli.commands.app import app

    review = CliRunner().invoke(app, ["review", "r1c2", "--repo", str(repo.root)])
    assert review.exit_code == 0, review.output
    assert "Sub-child" in review.output and "luggage" in review.output and "l0" in review.output
    review = CliRunner().invoke(app, ["review", "r1c1", "--repo", str(repo.root)])
    assert "Attribution" in review.output and "Sub-child: r1c2" in review.output
    story = (repo.root / ".frames" / "runs" / run_id / "report.md").read_text()
    assert (
        "- Attribution: r1c1: luggage broken by luggage (by l0, l1, l4); sub-child r1c2 without luggage passed the "
        "gate."
        in story
    )
    # 4. the left-out rewrite is remembered: round 2's diagnosers and luggage rewriter see it
    diagnosers = [p for m, p in scripted.prompts if m == "diagnoser"]
    assert "<tried>" not in diagnosers[0]
    assert any("<tried>" in p and "left out of r1c1" in p and "it broke l0, l1, l4" in p for p in diagnosers)
    luggage = scripted.rewriter_prompts("luggage")
    assert "left out of a child" not in luggage[0]
    assert len(luggage) == 2 and "left out of r1c1" in luggage[1] and "it broke l0, l1, l4" in luggage[1]
    lessons = json.loads((repo.root / ".frames" / "failed-changes.json").read_text())["lessons"]
    assert {(x["kind"], x["skill"]) for x in lessons if x["round"] == 1} == {("left-out", "luggage")}
    assert next(x for x in lessons if x["kind"] == "left-out")["broken"] == ["l0", "l1", "l4"]


def test_no_sub_child_when_attribution_is_off(tmp_path: Path, scripted: Scripted) -> None:
    repo = build(tmp_path / "ws", attribution_steps=0)
    state = load_state(repo.root, evolve(repo.root)["run_id"])
    assert [c["id"] for c in state["candidates"]] == ["r0c0", "r1c1"]
    assert state["checkpoint"]["rounds"][0]["attribution"] == []


def o(cat: str, *passes: bool) -> CaseOutcome:
    return CaseOutcome(cat, tuple(passes))


def test_a_broken_case_that_loaded_no_changed_skill_implicates_nothing() -> None:
    parent = {"a": o("x", True), "b": o("x", True)}
    child = {"a": o("x", False), "b": o("x", True)}
    found = attribute("r1c1", "gate", ["x"], parent, child, {"a": {"other"}}, ["s1", "s2"])
    assert found.broken == {"a": ()} and found.implicated == {} and found.unattributed == ("a",)
    assert not found.sub_child_possible
    assert (
        "no skill can be implicated" in found.note()
        and "the broken cases a loaded none of the changed skills" in found.note()
    )


def test_a_changed_catalog_line_is_implicated_by_every_broken_case() -> None:
    parent = {"a": o("x", True), "b": o("x", True), "c": o("y", True)}
    child = {"a": o("x", False), "b": o("x", False), "c": o("y", False)}
    found = attribute("r1c1", "gate", ["x"], parent, child, {"a": {"s1"}, "b": set()}, ["s1", "s2", "s3"],
                      catalog=["s2"])
    # c is in a category that did not fail: not analysed
    assert found.broken == {"a": ("s1", "s2"), "b": ("s2",)}
    assert found.implicated == {"s1": ("a",), "s2": ("a", "b")} and found.kept == ("s3",)
    assert found.sub_child_possible and Attribution.from_json(json.loads(json.dumps(found.to_json()))) == found


def test_a_child_rejected_early_is_judged_on_the_cases_it_has() -> None:
    parent = {"a": o("x", True), "b": o("x", True), "c": o("x", True), "d": o("x", False)}
    child = {"a": o("x", False)}  # b, c and d were never evaluated; d, failed by the parent, cannot have broken
    found = attribute("r1c1", "gate", ["x"], parent, child, {"a": {"s1"}}, ["s1", "s2"])
    assert found.broken == {"a": ("s1",)} and found.unevaluated == 2 and found.kept == ("s2",)


def test_fewer_samples_passed_is_broken_and_must_pass_cases_count_anywhere() -> None:
    parent = {"a": o("x", True, True), "m": o("z", True, True)}
    child = {"a": o("x", True, False), "m": o("z", False, False)}
    found = attribute("r1c1", "gate", ["x"], parent, child, {"a": {"s1"}, "m": {"s2"}}, ["s1", "s2"],
                      must_pass_broken=["m"])
    assert found.implicated == {"s1": ("a",), "s2": ("m",)} and not found.kept
    assert "every changed skill is implicated" in found.note()


def test_helpers_for_catalog_and_dominated_children() -> None:
    from frames_cli.formats.skill import Skill
    from frames_cli.formats.skill_set import SkillSet

    def skill_set(**descriptions: str) -> SkillSet:
        return SkillSet([Skill(name=n, description=d, body="b\n", metadata={}) for n, d in descriptions.items()])

    parent, child = skill_set(a="one", b="two"), skill_set(a="one", b="changed", c="new")
    assert catalog_changes(parent, child, ["a", "b", "c"]) == ["b", "c"]
    assert dominated_categories({"x": 0.5, "y": 1.0}, {"x": 0.5, "y": 0.5}) == ["y"]
    with pytest.raises(ValueError):
        attribute("r1c1", "maybe", [], {}, {}, {}, [])


def test_left_out_rewrites_become_lessons_and_kept_ones_do_not() -> None:
    failed = GateVerdict(False, [CategoryCheck("luggage", 1.0, 0.5, 0.95, False)])
    r = RoundRecord(round=1, child="r1c1", gate=GateRecord(failed))
    r.blueprints = tuple(Blueprint(s, False, "", (Change(quoted(rule), (), ("x",), (0,)),), 1)
                         for s, rule in (("seating", SEATING_NEW), ("luggage", LUGGAGE_NEW)))
    found = Attribution("r1c1", "gate", ("luggage",), ("luggage", "seating"), implicated={"luggage": ("l0",)})
    r.attribution = [AttributionRecord(found, found.note(), "r1c2")]
    lessons = round_lessons("run", r, passed=["r1c2"])
    assert [(x.kind, x.skill, x.broken) for x in lessons] == [("left-out", "luggage", ("l0",))]
    # the sub-child failed too: the kept rewrite is a gate lesson as before
    assert {(x.kind, x.skill) for x in round_lessons("run", r, passed=[])} == {
        ("left-out", "luggage"),
        ("gate", "seating"),
    }
    assert left_out_notes(lessons, "luggage", "run") == [f"{quoted(LUGGAGE_NEW)} — left out of r1c1 (it failed in "
                                                         f"luggage): it broke l0 (this run, round 1)"]
    assert left_out_notes(lessons, "luggage", "later") == [f"{quoted(LUGGAGE_NEW)} — left out of r1c1 (it failed in "
                                                           f"luggage): it broke l0 (earlier run 1, round 1)"]
    assert left_out_notes(lessons, "seating", "run") == []
