"""SKILL.md parsing, byte-identical rendering, checks, protected regions and the skill set."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import agentskills_command

from frames_cli.errors import InputError
from frames_cli.formats.protected import protected_regions
from frames_cli.formats.skill import BackLink, Skill
from frames_cli.formats.skill_checks import skill_problems
from frames_cli.formats.skill_file import parse_skill, parse_skill_bytes, render_skill
from frames_cli.formats.skill_set import SkillSet

HAND_WRITTEN = """---
name: cancel-flight   # trailing comment kept
description: >-
  Cancel a reservation. Use when the user asks
  to cancel a flight.
license: MIT
metadata:
  # frames data below
  frames-tags: "airline, cancel"
  owner: ops team
  frames-backlinks: |-
    policies/airline.md#L133-L152 sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa Airline Agent Policy > Cancel flight
---


# Cancel flight

Check the rules first.
<!-- frames:protected -->
Never cancel a flown segment.
<!-- /frames:protected -->
"""  # noqa: E501 - a back-link is one line of SKILL.md, whatever its length


def test_round_trip_is_byte_identical() -> None:
    skill = parse_skill(HAND_WRITTEN, Path("skills/cancel-flight/SKILL.md"))
    assert skill.description == "Cancel a reservation. Use when the user asks to cancel a flight."
    assert skill.body.startswith("# Cancel flight\n")
    assert skill.tags == ["airline", "cancel"]
    assert skill.backlinks == [BackLink("policies/airline.md", "Airline Agent Policy > Cancel flight", 133, 152,
                                        "a" * 64)]
    assert render_skill(skill) == HAND_WRITTEN


def test_edit_keeps_bytes_of_unedited_keys() -> None:
    skill = parse_skill(HAND_WRITTEN, Path("skills/cancel-flight/SKILL.md"))
    skill.body = skill.body.replace("Check the rules first.", "Check the cancellation rules first.")
    skill.references = ["refunds"]
    out = render_skill(skill)
    expected = HAND_WRITTEN.replace("Check the rules first.", "Check the cancellation rules first.").replace(
        "Cancel flight\n---", "Cancel flight\n  frames-references: refunds\n---"
    )
    assert out == expected
    skill.metadata["owner"] = "support"
    out = render_skill(skill)
    assert (
        "  owner: support\n" in out
        and "# frames data below" in out
        and "name: cancel-flight   # trailing comment kept" in out
    )


def test_new_skill_passes_reference_validator(tmp_path: Path) -> None:
    skill = Skill(name="book-flight", description="Book: a flight. Use when: yes, 1.5 or null", body="Body\n")
    skill.backlinks = [BackLink("policies/a b.md", "A > B: c", 1, 4, "0" * 64)]
    skill.metadata["frames-number"] = "123"
    folder = tmp_path / "book-flight"
    folder.mkdir()
    (folder / "SKILL.md").write_text(render_skill(skill))
    done = subprocess.run([agentskills_command() or "agentskills", "validate", str(folder)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    again = parse_skill((folder / "SKILL.md").read_text(), folder / "SKILL.md")
    assert (again.description, again.metadata, again.body) == (skill.description, skill.metadata, skill.body)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\n", "1: SKILL.md must start with a YAML front matter line `---`"),
        ("---\nname: x\n", "1: front matter is not closed with a `---` line"),
        ("---\nname: x\ndescription: [a\n---\n",
         "3: invalid YAML in front matter: expected ',' or ']', but got '<stream end>'"),
        ("---\ndescription: d\n---\nbody\n", "1: missing required front-matter key `name`"),
        ("---\nname: x\ndescription: d\nversion: 2\n---\n",
         "4: unknown front-matter key `version` (allowed: name, description, license, compatibility, allowed-tools, "
         "metadata)"),
        ("---\nname: x\nname: y\ndescription: d\n---\n", "3: duplicate front-matter key `name`"),
        ("---\nname: 12\ndescription: d\n---\n", "2: `name` must be a string, got 12 (quote it)"),
        ("---\nname: x\ndescription: d\nmetadata: {a: b}\n---\n",
         "4: flow style ({...} or [...]) is not allowed in front matter; use block style"),
        ("---\nname: x\ndescription: d\nmetadata:\n  k:\n    - 1\n---\n", "6: `metadata.k` must be a string"),
        ("---\nname: x\ndescription: a --- b\n---\n", "3: front matter must not contain `---`"),
        ("---\nname: x\ndescription: &d text\nlicense: *d\n---\n",
         "3: YAML anchors and aliases are not allowed in front matter"),
        ("---\nname: x\ndescription: !!str 12\n---\n", "3: YAML tags (`!!str`, `!x`) are not allowed in front matter"),
    ],
)
def test_parse_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_skill(text, Path("s/SKILL.md"))
    assert str(info.value) == f"s/SKILL.md:{message}"


def test_non_utf8_names_the_line() -> None:
    with pytest.raises(InputError, match=r"^s/SKILL.md:3: not UTF-8 text \(byte 25\)$"):
        parse_skill_bytes(b"---\nname: x\ndescription: \xff\n---\n", Path("s/SKILL.md"))


def test_skill_problems() -> None:
    skill = parse_skill(
        "---\nname: Bad_Name\ndescription: use <b>\n---\n\nx\n<!-- frames:protected -->\ny\n",
        Path("skills/other/SKILL.md")
    )
    assert [str(p) for p in skill_problems(skill, folder="other", max_body_lines=1)] == [
        "skills/other/SKILL.md:2: error: name 'Bad_Name' must be lowercase letters, digits and single hyphens (no "
        "leading or trailing hyphen)",
        "skills/other/SKILL.md:2: error: name 'Bad_Name' differs from its folder name 'other'",
        "skills/other/SKILL.md:3: error: description must not contain `<` or `>`",
        "skills/other/SKILL.md:7: error: protected region is never closed",
        "skills/other/SKILL.md:1: warning: body has 3 lines; keep it under 1 (cost is an objective)",
    ]


def test_protected_regions() -> None:
    body = ("a\n<!-- frames:protected -->\nb\nc\n<!-- /frames:protected -->\nd\n<!-- frames:protected -->\ne\n<!-- "
            "/frames:protected -->\n")
    assert protected_regions(body) == ["b\nc\n", "e\n"]
    with pytest.raises(ValueError, match="body line 1: `<!-- /frames:protected -->` without an opening marker"):
        protected_regions("<!-- /frames:protected -->\n")


def test_edited_detects_changes_after_generation() -> None:
    skill = Skill(name="a", description="d", body="b\n")
    skill.metadata["frames-generated"] = skill.content_sha256()
    assert not skill.edited
    skill.body += "more\n"
    assert skill.edited


def test_skill_set_duplicates_and_escape() -> None:
    files = {
        "skills/a/SKILL.md": b"---\nname: a\ndescription: d\n---\nA\n",
        "skills/b/SKILL.md": b"---\nname: a\ndescription: d\n---\nB\n",
        "skills/c/SKILL.md": b"---\nname: c\ndescription: d\n---\nC\n",
        "skills/c/references/x.md": b"ignored",
    }
    skills, problems = SkillSet.check_files(files)
    assert list(skills) == ["c"]
    assert [str(p) for p in problems] == [
        "skills/a/SKILL.md:2: error: duplicate skill name 'a' (used by skills/a/SKILL.md, skills/b/SKILL.md)",
        "skills/b/SKILL.md:2: error: name 'a' differs from its folder name 'b'",
        "skills/b/SKILL.md:2: error: duplicate skill name 'a' (used by skills/a/SKILL.md, skills/b/SKILL.md)",
    ]
    with pytest.raises(InputError, match="invalid skill name '../evil'"):
        SkillSet([Skill(name="../evil", description="d", body="")]).to_files()


def test_skill_set_to_files_round_trip(tmp_path: Path) -> None:
    files = {"skills/cancel-flight/SKILL.md": HAND_WRITTEN.encode()}
    skills = SkillSet.from_files(files)
    assert skills.to_files() == files
    grown = skills.with_skill(Skill(name="book-flight", description="d", body="b\n"))
    assert list(grown) == ["book-flight", "cancel-flight"] and list(skills) == ["cancel-flight"]
    assert list(grown.without("cancel-flight")) == ["book-flight"]
