"""Policy amendments: changed sections, stale skills from back-link hashes, generated cases for the new rules."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.formats.case_files import load_cases
from frames_cli.formats.skill_set import SkillSet
from frames_cli.ingest.feedback.amendment import git_versions, section_changes, stale_skills

runner = CliRunner()
PETS = "\n## Pets\n\nPets may travel in the cabin only on business flights.\nAt most one pet per passenger.\n"


def amend(text: str) -> str:
    """The amendment a policy team would make: 48 hours instead of 24, and a new section on pets."""
    assert "- The booking was made within the last 24 hrs" in text
    return text.replace("- The booking was made within the last 24 hrs",
                        "- The booking was made within the last 48 hrs") + PETS


def test_changed_and_added_sections_and_the_skills_they_make_stale(workspace: Path):
    old = (workspace / "policies" / "airline.md").read_bytes()
    new = amend(old.decode()).encode()
    changes = section_changes("policies/airline.md", old, new)
    assert [(c.heading.split(" > ")[-1], c.status) for c in changes] == [
        ("Cancel flight", "changed"),
        ("Pets", "added"),
    ]
    assert changes[0].added == ["The booking was made within the last 48 hrs"]
    assert changes[0].removed == ["The booking was made within the last 24 hrs"]
    # The generator sees the list holding the changed rule, not the whole section.
    [block] = changes[0].focus
    assert block.text.splitlines()[0] == "Otherwise, flight can be cancelled if any of the following is true:"
    assert block.text.splitlines()[-1].startswith("- The user has travel insurance")
    assert changes[1].focus == [changes[1].unit]
    stale = stale_skills(SkillSet.from_dir(workspace / "skills"), {"policies/airline.md": new}, changes)
    assert [(s.skill, s.reason, s.sections) for s in stale] == [
        ("cancel-flight", "text changed", ["Airline Agent Policy > Cancel flight"])]
    gone = stale_skills(SkillSet.from_dir(workspace / "skills"), {"policies/airline.md": None}, [])
    assert sorted(s.skill for s in gone) == ["book-flight", "cancel-flight", "compensation", "modify-flight"]
    assert {s.reason for s in gone} == {"file removed"}


def test_amendment_command_reports_and_generates_cases_for_the_changed_rules(workspace: Path):
    old = workspace / "airline-2024-04.md"
    old.write_bytes((workspace / "policies" / "airline.md").read_bytes())
    (workspace / "policies" / "airline.md").write_text(amend(old.read_text()), encoding="utf-8")
    result = runner.invoke(app, ["ingest", "amendment", str(old), str(workspace / "policies" / "airline.md"),
                                 "--json", "--repo", str(workspace)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [s["skill"] for s in report["stale_skills"]] == ["cancel-flight"]
    assert [c["status"] for c in report["changed_sections"]] == ["changed", "added"]
    cases = load_cases([workspace / "cases" / "amendment.yaml"])
    assert cases and {c.source.kind for c in cases} == {"amendment"}
    assert all(c.generated and not c.reviewed for c in cases)
    assert {c.source.ref.rsplit(":", 1)[0] for c in cases} == {"policies/airline.md"}
    policy = " ".join((workspace / "policies" / "airline.md").read_text().replace("**", "").split())
    assert all(e in policy for c in cases for e in c.diagnosis.evidence)
    focus = {f"policies/airline.md:{span}" for c in report["changed_sections"] for span in c["focus"]}
    assert {c.source.ref for c in cases} <= focus
    # The skill file is not touched: staleness is a fact about hashes, reported, not written.
    assert "sha256:" in (workspace / "skills" / "cancel-flight" / "SKILL.md").read_text()


@pytest.mark.parametrize("top", [".", ".."], ids=["top-level", "subfolder"])
def test_git_range_mode_compares_policies_at_two_commits(workspace: Path, top: str):
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], cwd=workspace, check=True,
                       capture_output=True)

    # "..": the repository's top level is the workspace's parent (a monorepo); paths stay workspace-relative.
    git("init", "-q", top)
    git("add", ".")
    git("commit", "-q", "-m", "policy v1")
    policy = workspace / "policies" / "airline.md"
    policy.write_text(amend(policy.read_text()), encoding="utf-8")
    (workspace / "policies" / "LICENSE").write_text("changed licence text\n", encoding="utf-8")
    git("add", ".")
    git("commit", "-q", "-m", "policy v2")
    label, old, new = git_versions(workspace, workspace / "policies", "HEAD~1..HEAD")
    assert list(new) == ["policies/airline.md"] and len(label) == 16  # companions such as LICENSE are skipped
    result = runner.invoke(app, ["ingest", "amendment", "--git", "HEAD~1", "--repo", str(workspace)])
    assert result.exit_code == 0, result.output
    assert "stale: cancel-flight: text changed at policies/airline.md#L133-L153" in result.stdout
    assert "+ The booking was made within the last 48 hrs" in result.stdout
    assert runner.invoke(app, ["ingest", "amendment", "--repo", str(workspace)]).exit_code == 2


def test_a_bad_old_version_is_named_in_the_error_and_nothing_is_written(workspace: Path):
    old = workspace / "old-policy.md"
    old.write_bytes(b"# Policy\n\nRefunds take 5 days.\nCaf\xe9 rules\n")
    result = runner.invoke(app, ["ingest", "amendment", str(old), str(workspace / "policies" / "airline.md"),
                                 "--repo", str(workspace)])
    assert result.exit_code == 2 and f"{old}:4: not UTF-8" in result.stderr
    assert list((workspace / "cases").iterdir()) == []
