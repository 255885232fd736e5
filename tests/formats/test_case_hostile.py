"""Case text is data however it is written (issue 29).

Invariants:
1. A control character in any case text is refused with its key, raw or as a YAML or JSON escape.
2. An id or category holding a line break (which forged an `error:` line in `frames eval`'s
   output) or an invisible character is refused.
3. A JSON Lines record nested 100,000 deep is a located error, not a RecursionError.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frames_cli.errors import InputError
from frames_cli.formats.case_files import load_cases

TASK = '{input: {text: "Cancel my trip."}, expected: "no", check: {kind: exact}}'


def yaml_case(**fields: str) -> str:
    base = {"id": "c-1", "category": "cancel", "task": TASK}
    base.update(fields)
    return "- " + "\n  ".join(f"{k}: {v}" for k, v in base.items()) + "\n"


@pytest.mark.parametrize(
    ("fields", "key", "what"),
    [
        ({"category": '"cancel\\e]0;pwned\\a"'}, "category", "U+001B"),
        ({"id": '"c-1\\u202e"'}, "id", "U+202E"),
        ({"id": '"c-1\\nerror: cases/x.yaml:1: forged"'}, "id", "a line break"),
        ({"category": '"cancel\\u2028x"'}, "category", "a line break"),
        ({"task": '{input: {text: "Cancel \\x9b2J my trip."}, expected: "no", check: {kind: exact}}'},
         "task.input.text", "U+009B"),
        ({"task": '{input: {text: "x"}, expected: "no\\x07", check: {kind: exact}}'}, "task.expected", "U+0007"),
    ],
)
def test_escaped_control_characters_are_refused_with_their_key(tmp_path: Path, fields: dict, key: str,
                                                               what: str) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(yaml_case(**fields))
    with pytest.raises(InputError) as info:
        load_cases([path])
    # Located at the key's line (id 1, category 2, task 3).
    assert f"`{key}` holds" in info.value.message and what in info.value.message
    assert info.value.location.line == {"id": 1, "category": 2}.get(key, 3)


def test_json_escapes_are_refused_too(tmp_path: Path) -> None:
    record = {"id": "c-1", "category": "cancel",
              "task": {"input": {"text": "x"}, "expected": "no", "check": {"kind": "exact"}},
              "diagnosis": {"notes": "see \u001b[2J"}}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(record) + "\n")  # ensure_ascii: the ESC is written as \u001b
    with pytest.raises(InputError, match=r"cases.jsonl:1: `diagnosis.notes` holds the character U\+001B"):
        load_cases([path])


def test_right_to_left_text_in_a_case_body_stays_allowed(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(yaml_case(task='{input: {text: "\\u05e9\\u05dc\\u05d5\\u05dd \\u200f ok"}, expected: "no", check: '
                                   '{kind: exact}}'))
    assert load_cases([path])[0].task.input["text"].endswith("ok")


def test_a_jsonl_record_nested_100000_deep_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "category": "x", "task": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(InputError, match=r"cases.jsonl:1: JSON nested more than 64 levels deep"):
        load_cases([path])
