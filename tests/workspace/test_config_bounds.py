"""Bounded work on unbounded input: every number and path of frames.yaml has a documented bound,
checked before any work (issue 29).

Invariants:
1. Every numeric setting has a minimum and a maximum, shown in docs/settings.md.
2. A value past its bound is a located error; so is a path setting leaving the workspace.
3. A setting holding a control or invisible character or a line break, raw or as a YAML escape, is refused.
4. A back-link naming an absurd line is a malformed back-link, and coverage never walks past the file's end.
"""

from __future__ import annotations

import dataclasses
import typing

import pytest

from frames_cli.errors import ConfigError
from frames_cli.workspace.config import FramesConfig
from frames_cli.workspace.config_file import parse_config


def _numeric_fields(obj, prefix=""):
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            yield from _numeric_fields(value, f"{prefix}{f.name}.")
        elif any(t in (int, float) for t in typing.get_args(hints[f.name]) or (hints[f.name],)):
            yield f"{prefix}{f.name}", f.metadata


def test_every_numeric_setting_has_a_documented_range():
    fields = dict(_numeric_fields(FramesConfig()))
    assert len(fields) > 50
    assert [k for k, meta in fields.items() if "min" not in meta or "max" not in meta] == []


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("eval:\n  samples: 1000000000\n", "`eval.samples` must be at most 1000"),
        ("evolution:\n  diagnosers: 1000000000\n", "`evolution.diagnosers` must be at most 64"),
        ("evolution:\n  split:\n    test_cases: ../outside/*\n",
         "`evolution.split.test_cases` must be a path relative to the workspace"),
        ("evolution:\n  split:\n    test_cases: /etc/*\n",
         "`evolution.split.test_cases` must be a path relative to the workspace"),
        ("executor:\n  kind: command\n  command: [\"agent\\e]0;pwned\\a\"]\n",
         "`executor.command` holds the character U+001B (ESC)"),
        ("eval:\n  cases: \"cases/\\u202e*\"\n", "`eval.cases` holds the character U+202E"),
        ("models:\n  executor: \"frames-sim/executor\\nerror: forged\"\n", "`models.executor` holds a line break"),
        ("coldstart:\n  min_tokens: 900\n  max_tokens: 100\n",
         "`coldstart.min_tokens` 900 is more than `coldstart.max_tokens` 100"),
    ],
)
def test_values_past_their_bounds_are_located_errors(text: str, fragment: str):
    with pytest.raises(ConfigError) as info:
        parse_config("version: 1\n" + text, "frames.yaml")
    assert fragment in info.value.message and info.value.location.line is not None


def test_a_back_link_to_an_absurd_line_is_malformed(tmp_path):
    from frames_cli.formats.coverage import coverage
    from frames_cli.formats.policy import read_policies
    from frames_cli.formats.skill import Skill
    from frames_cli.formats.skill_checks import skill_problems

    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.md").write_text("# P\n\nRule one.\n")
    sha = "0" * 64
    huge = Skill("s", "A skill about rule one.", "Rule one.\n",
                 metadata={"frames-backlinks": f"policies/p.md#L1-L999999999999 sha256:{sha} P"})
    assert any("at most 1,000,000 lines" in p.message for p in skill_problems(huge, folder="s"))
    past_end = Skill("s", "A skill about rule one.", "Rule one.\n",
                     metadata={"frames-backlinks": f"policies/p.md#L1-L999999 sha256:{sha} P"})
    [file_coverage] = coverage(read_policies(tmp_path, tmp_path / "policies"), [past_end])
    assert file_coverage.covered == file_coverage.content_lines == 2
