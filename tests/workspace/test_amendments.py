"""Policy amendments under evolved skills: stale back-links with the lines that changed.

Invariants:
1. A back-link whose span text changed is listed with "-" the text the skill was written from
   (found in the policy file's git history) and "+" the text now; unchanged spans are not listed.
2. When that text is not in the history, the current lines are shown and the entry says so.
3. `frames status` and `frames review` show the changed lines; the next evolve's diagnosers get
   them (the notice workspace/amendments.py builds from the base commit's policies and history,
   which the run reads as this test does, and one event naming the stale skills).
"""

from __future__ import annotations

import json

from helpers.review_world import invoke

from frames_cli.evolution.state.events import PolicyAmended
from frames_cli.formats.policy import span_sha256
from frames_cli.formats.skill import BackLink, Skill
from frames_cli.formats.skill_set import SkillSet
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.amendments import diagnoser_notice, stale_links, workspace_stale_links

OLD = ["# Policy", "", "## Bags", "One free bag.", "Extra bags cost 50.", "", "## Other", "Be kind."]


def _skill(start: int, end: int, lines: list[str]) -> Skill:
    skill = Skill(name="bags", description="Bags.", body="Bags.\n")
    skill.backlinks = [BackLink("policies/p.md", "Policy > Bags", start, end, span_sha256(lines, start, end))]
    return skill


def test_changed_lines_of_a_span_come_from_the_history():
    new = OLD[:4] + ["Extra bags cost 60.", "Bags over 23 kg cost 100."] + OLD[5:]
    links = stale_links([_skill(4, 5, OLD)], lambda _f: new, lambda _f: [new, OLD])
    assert [(link.skill, link.where, link.changed, link.found) for link in links] == [
        ("bags", "policies/p.md:4-5 Policy > Bags",
         ["-Extra bags cost 50.", "+Extra bags cost 60.", "+Bags over 23 kg cost 100."], True)]
    assert stale_links([_skill(4, 5, OLD)], lambda _f: OLD, lambda _f: []) == []
    assert "- skill bags, policies/p.md:4-5 Policy > Bags:\n    -Extra bags cost 50." in diagnoser_notice(links)
    assert diagnoser_notice([]) == ""


def test_a_version_missing_from_the_history_is_said_so():
    new = OLD[:3] + ["Two free bags."] + OLD[4:]
    (link,) = stale_links([_skill(4, 5, OLD)], lambda _f: new, lambda _f: [new])
    assert not link.found and link.changed[0].startswith("(its source text is not in the git history")
    assert link.changed[1:] == ["+Two free bags.", "+Extra bags cost 50."]


def test_status_review_and_the_next_run_show_the_amendment(world):
    policy = world.root / "policies" / "airline.md"
    policy.write_text(policy.read_text().replace("Cancel within 24 hours for free.",
                                                 "Cancel within 48 hours for free."))
    world.git("commit", "-q", "-am", "Policy: 48 hours")
    status = json.loads(invoke(world, "status", "--json").stdout)
    cancel = [s for s in status["stale_links"] if s["skill"] == "cancel"]
    assert [s["changed"] for s in cancel] == [["-Cancel within 24 hours for free.",
                                               "+Cancel within 48 hours for free."]]
    text = invoke(world, "status").stdout
    assert (
        "      -Cancel within 24 hours for free." in text
        and "the next `frames evolve` shows these lines to its diagnosers" in text
    )
    review = invoke(world, "review", "r1c1", "--markdown", "-").stdout
    assert "the policy changed since this skill was written, at policies/airline.md:4-5" in review
    assert "    +Cancel within 48 hours for free." in review
    store = GitStore(world.root)
    head = store.resolve("HEAD")
    skills = SkillSet.from_files(store.read_files(head))
    links = workspace_stale_links(store.read_files(head, "policies/").get, store, skills.values(), ref=head)
    notice = diagnoser_notice(links)
    assert "+Cancel within 48 hours for free." in notice and "skill cancel, policies/airline.md:4-5" in notice
    assert sorted({link.skill for link in links}) == ["cancel", "refund"]
    line = "policy amended under 2 skills (cancel, refund): the diagnosers are shown the changed lines"
    assert str(PolicyAmended(("cancel", "refund"))) == line
