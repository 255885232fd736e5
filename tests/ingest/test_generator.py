"""Cold-start case generator: coverage of policy sections, validation of proposals, offline runs on frames-sim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.formats.case import Diagnosis
from frames_cli.formats.case_files import load_cases
from frames_cli.ingest.cases.dedup import make_case
from frames_cli.ingest.cases.generator import Unit, compute_coverage, validate_generated
from frames_cli.ingest.feedback.pipeline import coverage
from frames_cli.workspace.layout import Workspace

runner = CliRunner()
CANCEL = Unit("policies/airline.md", "Airline Agent Policy > Cancel flight", 133, 153,
              "## Cancel flight\n\nOtherwise, flight can be cancelled if any of the following is true:\n"
              "- The booking was made within the last 24 hrs\n- It is a business flight\n")


def test_a_case_covers_the_section_its_evidence_matches_best(workspace: Path):
    ws = Workspace.open(workspace)
    units = coverage(ws, ws.config()).units
    assert [u.heading.split(" > ")[-1] for u in units] == [
        "Airline Agent Policy", "User", "Flight", "Reservation", "Book flight", "Modify flight", "Cancel flight",
        "Refunds and Compensation"]
    case = make_case("import", "x", text="Change my basic economy flight", expected="refuse", category="modify",
                     diagnosis=Diagnosis(evidence=["Basic economy flights cannot be modified."]))
    vague = make_case("import", "y", text="hi", expected="hello", category="misc",
                      diagnosis=Diagnosis(evidence=["Say hello nicely."]))
    heading = make_case("import", "z", text="who", expected="me", category="misc",
                        diagnosis=Diagnosis(evidence=["User"]))
    cov = compute_coverage(units, [case, vague, heading], threshold=0.6)
    assert cov.covered_by == {"policies/airline.md:103-132": [case.id]}
    assert len(cov.uncovered()) == 7


def test_validation_quotes_the_section_and_drops_what_it_cannot_check():
    good = {"input": {"text": "I booked 3 days ago in economy, cancel it", "fields": {"created": "2024-05-12"}},
            "expected": "refuse", "check": {"kind": "contains"}, "category": "Cancel",
            "evidence": ["the booking was made within the last 24 hours"]}
    case = validate_generated(good, CANCEL, 0.6)
    assert case.diagnosis.evidence == ["The booking was made within the last 24 hrs"]
    assert (case.generated, case.reviewed, case.category, case.source.kind) == (True, False, "cancel", "generator")
    assert case.source.ref == "policies/airline.md:133-153" and case.task.check.kind == "contains"
    for broken, message in [
        ({**good, "evidence": ["Pets fly free on Tuesdays."]}, "is not in policies/airline.md:133-153"),
        ({**good, "evidence": []}, "no evidence"),
        ({**good, "evidence": ["Cancel flight"]}, "not a rule sentence"),
        ({**good, "input": {"text": "  "}}, "no input text"),
        ({**good, "expected": ""}, "no expected outcome"),
        ({**good, "check": {"kind": "fuzzy"}}, "unknown check kind 'fuzzy'"),
        ({**good, "category": ""}, "no category"),
    ]:
        with pytest.raises(ValueError, match=message):
            validate_generated(broken, CANCEL, 0.6)


def test_a_generated_check_is_no_stricter_than_the_policy_means():
    """A model-proposed `exact` on text, or `contains` on a sentence, would fail every reworded right answer."""
    base = {"input": {"text": "I booked 3 days ago in economy, cancel it"}, "category": "cancel",
            "evidence": ["the booking was made within the last 24 hours"]}
    kinds = [validate_generated({**base, "expected": expected, "check": {"kind": kind}}, CANCEL, 0.6).task.check.kind
             for expected, kind in [("refuse", "exact"), ("refuse", "contains"),
                                    ("Refuse: the booking is older than 24 hours and economy.", "contains"),
                                    (4, "exact"), (["a", "b"], "set")]]
    assert kinds == ["contains", "contains", "rubric", "exact", "set"]


def test_generate_offline_through_the_simulator_marks_cases_for_review(workspace: Path):
    result = runner.invoke(app, ["ingest", "generate", "--cases", "4", "--json", "--repo", str(workspace)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["usage"]["prompt_tokens"] > 0 and len(report["uncovered"]) == 8
    cases = load_cases([workspace / "cases" / "generated.yaml"])
    assert 1 <= len(cases) <= 4
    policy = " ".join((workspace / "policies" / "airline.md").read_text().replace("**", "").split())
    for case in cases:
        assert case.generated and not case.reviewed and case.source.kind == "generator"
        assert all(sentence in policy for sentence in case.diagnosis.evidence)
    again = runner.invoke(app, ["ingest", "generate", "--dry-run", "--json", "--repo", str(workspace)])
    left = json.loads(again.stdout)["uncovered"]
    covered = {c.source.ref for c in cases}
    assert len(left) == 8 - len(covered) and not covered & {u["ref"] for u in left}
    assert json.loads(again.stdout)["would_generate"] == 2 * len(left)  # ingest.generated_per_section each
    text = runner.invoke(app, ["ingest", "generate", "--dry-run", "--repo", str(workspace)]).stdout
    assert (
        f"dry run: {len(left)} uncovered sections; the generator would be asked for at most {2 * len(left)} cases"
        in " ".join(text.split())
    )
    assert "set `reviewed: true`" in text
    # None of the generated cases counts yet: status names the sections only they cover.
    status = json.loads(runner.invoke(app, ["status", "--json", "--repo", str(workspace)]).stdout)
    assert {u["ref"] for u in status["awaiting_review"]} == covered
    assert "only cases waiting for review cover" in runner.invoke(app, ["status", "--repo", str(workspace)]).stdout


def test_generator_faults_are_reported_and_nothing_is_written(workspace: Path):
    (workspace / "frames.yaml").write_text(
        "models:\n  generator: frames-sim/generator\nllm:\n  max_retries: 0\n  repair_turns: 0\n  cache: false\n"
        "simulator:\n  faults:\n    malformed_json: 1.0\n", encoding="utf-8")
    result = runner.invoke(app, ["ingest", "generate", "--cases", "2", "--repo", str(workspace)])
    assert result.exit_code == 0, result.output
    assert "warning: generator failed for Airline Agent Policy" in result.stderr
    assert not (workspace / "cases" / "generated.yaml").exists()


def test_generate_without_a_generator_model_is_a_config_error(workspace: Path):
    (workspace / "frames.yaml").write_text("models: {}\n", encoding="utf-8")
    result = runner.invoke(app, ["ingest", "generate", "--repo", str(workspace)])
    assert result.exit_code == 2 and "models.generator" in result.stderr


def test_a_skill_without_back_links_is_a_unit_and_the_prompt_follows_the_convention(workspace: Path):
    from frames_cli.ingest.cases.generator import generator_request
    from frames_cli.sim import reading

    folder = workspace / "skills" / "greeting"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: greeting\ndescription: Open every conversation.\n---\n\n"
        "Greet the user by name.\nNever ask for the password.\n", encoding="utf-8")
    ws = Workspace.open(workspace)
    units = [u for u in coverage(ws, ws.config()).uncovered() if u.skill]
    assert [(u.file, u.start, u.end, u.skill) for u in units] == [("skills/greeting/SKILL.md", 6, 7, "greeting")]
    prompt = generator_request(units[0], 3, ["cancel", "modify"]).messages[0]["content"]
    attrs, text = reading.policy_block(prompt)
    assert attrs == {"file": "skills/greeting/SKILL.md", "lines": "6-7", "heading": "greeting"}
    assert text == "Greet the user by name.\nNever ask for the password.\n".rstrip("\n")
    assert "write up to 3 cases" in prompt.replace("\n", " ") and "Category: greeting" in prompt
    assert "Categories already in use (take one of them instead when it fits better): cancel, modify" in prompt
