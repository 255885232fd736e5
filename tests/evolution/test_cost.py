"""Cost-directed children (evolution/propose/cost.py, issue #11 item 7).

Invariants:
1. A skill's cost per case is the share of results that loaded it × its body's tokens; skills are
   ranked costliest first, and a skill no result loaded costs nothing.
2. When the parent fails at most `evolution.cost.max_failures` diagnosis-set cases, the round calls
   no diagnoser: it condenses the costliest skills, measured on the parent's kept evaluation
   (recorded as kind "cost").
3. Such a child that keeps the pass rate with fewer tokens joins the front ("same pass rate, fewer
   tokens"), and every policy rule the skill held is still there.
4. With `evolution.cost.enabled: false` a parent without failures makes no child, as before.
"""

from __future__ import annotations

import json
from pathlib import Path

from frames_cli.evolution.propose.cost import condense_blueprints, skill_costs
from frames_cli.evolution.state.splits import Split
from frames_cli.formats.skill_set import SkillSet
from frames_cli.llm.messages.conventions import CONDENSE

from helpers.airline import CONFIG, build_repo, evolve, run_folder, skill_text

LONG = (
    "# Baggage\n\n" + "- Gold members get three free checked bags.\n" * 3 + "- Each extra bag costs **50 dollars**.\n"
)


def _skills() -> SkillSet:
    return SkillSet.from_files({
        "skills/baggage/SKILL.md": skill_text("baggage", "Bags.", LONG).encode(),
        "skills/cancel/SKILL.md": skill_text("cancel", "Cancel.", "# Cancel\n\n- Cancel within 24 hours.\n").encode(),
        "skills/unused/SKILL.md": skill_text("unused", "Unused.",
                                             "# Unused\n\n" + "- A long rule nobody loads.\n" * 20).encode(),
    })


def test_skill_cost_is_load_share_times_body_tokens() -> None:
    results = [
        {"case_id": "a", "skills_used": ["baggage", "cancel"]},
        {"case_id": "b", "skills_used": ["cancel"]},
        {"case_id": "c", "skills_used": ["cancel", "cancel"]},  # loaded twice in one case counts once
        {"case_id": "d", "skills_used": ["baggage"], "lost": True},  # a lost result is not counted
    ]
    skills = _skills()
    costs = skill_costs(results, skills)

    assert [c.skill for c in costs] == ["baggage", "cancel"]  # `unused` was never loaded
    baggage, cancel = costs
    assert (baggage.loads, baggage.results, cancel.loads) == (1, 3, 3)
    assert baggage.per_case == baggage.tokens / 3 and cancel.per_case == cancel.tokens
    (blueprint,) = condense_blueprints(costs, 1)
    assert blueprint.skill == "baggage" and blueprint.changes[0].change == CONDENSE and blueprint.case_ids == []


def _all_pass(tmp_path: Path, **cost) -> tuple[dict, dict]:
    config = json.loads(json.dumps(CONFIG))
    # Every skill a case loads is condensed (skills: 3), so which one costs most does not matter.
    config["evolution"].update(max_rounds=1, cost={"skills": 3, **cost})
    # An executor that answers every case right: S0 fails nothing, so there is nothing to diagnose.
    config["simulator"] = {"seed": 3, "floor": 1.0, "ceiling": 1.0, "p_forget": 0.0, "p_forget_anchored": 0.0,
                           "p_verbose": 0.0}
    repo = build_repo(tmp_path / "ws", config)
    path = repo.root / "skills" / "baggage" / "SKILL.md"
    path.write_text(skill_text("baggage", "Free and paid checked bags by membership tier and cabin.", LONG))
    repo.git("commit", "-q", "-am", "a baggage skill that repeats itself")
    menu = evolve(repo.root)
    folder = run_folder(repo.root, menu["run_id"])
    return json.loads((folder / "state.json").read_text()), {"repo": repo, "folder": folder}


def test_a_parent_without_failures_gets_a_cost_directed_child_on_the_front(tmp_path: Path) -> None:
    state, extra = _all_pass(tmp_path)
    (round1,) = state["checkpoint"]["rounds"]

    assert round1["kind"] == "cost" and round1["batches"] == [] and round1["diagnoses"] == []
    split = Split.from_json(state["checkpoint"]["split"])
    results = json.loads((extra["folder"] / "evals" / "r0c0.json").read_text())["results"]
    skills_dir = extra["repo"].root / "skills"
    files = {f"skills/{p.parent.name}/SKILL.md": p.read_bytes() for p in skills_dir.glob("*/SKILL.md")}
    costs = skill_costs([r for r in results if r["case_id"] in split.diagnosis], SkillSet.load_valid(files)[0])
    assert costs and [b["skill"] for b in round1["blueprints"]] == [c.skill for c in costs][:3]
    assert all(b["changes"][0]["change"] == CONDENSE and b["changes"][0]["case_ids"] == []
               for b in round1["blueprints"])
    child = next(c for c in state["candidates"] if c["id"] == round1["child"])
    s0 = next(c for c in state["candidates"] if c["id"] == "r0c0")
    assert child["pass_rate"] == s0["pass_rate"] and child["mean_tokens"] < s0["mean_tokens"]
    assert child["id"] in state["front"]
    assert "baggage" in child["changed_skills"]
    body = extra["repo"].git("show", f"{child['commit']}:skills/baggage/SKILL.md")
    assert body.count("Gold members get three free checked bags.") == 1 and "Each extra bag costs 50 dollars." in body


def test_switched_off_a_parent_without_failures_makes_no_child(tmp_path: Path) -> None:
    state, _ = _all_pass(tmp_path, enabled=False)
    (round1,) = state["checkpoint"]["rounds"]
    assert round1["kind"] == "failures" and round1["child"] is None and round1["note"] == "the parent fails no case"
