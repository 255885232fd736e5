"""Advice-only feedback → priors on the skills BM25 matches; weak matches stay unmatched."""

from __future__ import annotations

from pathlib import Path

from frames_cli.formats.case import Source
from frames_cli.formats.skill_set import SkillSet
from frames_cli.ingest.cases.priors import Prior, SkillMatcher, attach, load_priors, save_priors


def test_advice_goes_to_the_matching_skill_and_weak_matches_are_left_out(workspace: Path):
    matcher = SkillMatcher(SkillSet.from_dir(workspace / "skills"), min_score=1.0, max_skills=2)
    assert [n for n, _ in matcher.match("Always mention the certificate amount per passenger when you offer one.")] == [
        "compensation"
    ]
    assert [n for n, _ in matcher.match("When adding bags, say the price of each extra bag first.")] == ["book-flight"]
    assert matcher.match("be friendlier") == []
    assert matcher.match("Please use the new greeting template from marketing.") == []


def test_attach_saves_and_loads_with_hints_and_without_duplicates(workspace: Path):
    matcher = SkillMatcher(SkillSet.from_dir(workspace / "skills"), min_score=1.0, max_skills=2)
    priors = load_priors(workspace)
    advice = [
        Prior("Always mention the certificate amount per passenger.", Source("review-log", "b.jsonl:3")),
        Prior("be friendlier", Source("review-log", "b.jsonl:7")),
        Prior("Read the refund rule aloud.", Source("review-log", "b.jsonl:8")),
    ]
    placed = attach(priors, matcher, advice, [None, None, "cancel-flight"])
    assert placed == [["compensation"], [], ["cancel-flight"]]
    save_priors(workspace, priors)
    again = load_priors(workspace)
    assert again.for_skill("compensation") == ["Always mention the certificate amount per passenger."]
    assert [p.text for p in again.unmatched] == ["be friendlier"]
    attach(again, matcher, advice[:1], [None])
    assert again.for_skill("compensation") == ["Always mention the certificate amount per passenger."]
