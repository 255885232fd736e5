"""Case files: reading YAML and JSON Lines, `path:line` errors, collecting problems, atomic writing."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from frames_cli.errors import InputError
from frames_cli.formats.case import Case
from frames_cli.formats.case_files import check_case_files, load_cases, load_counted_cases, write_cases

GOOD_YAML = """\
- id: c1
  category: cancel
  source: {kind: manual, ref: notes.md}
  created: "2026-11-01"
  task:
    input: "Please cancel reservation ABC123."
    answer_format: 'JSON {"actions": [...]}'
    expected: {actions: [{name: cancel_reservation, arguments: {reservation_id: ABC123}}]}
    check: {kind: set, field: actions}
  diagnosis:
    evidence: ["Cancellations within 24 hours of booking are refunded."]
- id: c2
  category: refuse
  task:
    input: {text: "Refund me", fields: {user_id: u1}}
    expected: {actions: []}
    check: set
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_cases_load_with_defaults_and_locations(tmp_path: Path) -> None:
    path = write(tmp_path / "a.yaml", GOOD_YAML)
    c1, c2 = load_cases([path])
    assert c1.task.input == {"text": "Please cancel reservation ABC123.", "fields": {}}
    assert c1.task.check.kind == "set" and c1.task.check.options == {"field": "actions"}
    assert c1.diagnosis.evidence == ["Cancellations within 24 hours of booking are refunded."]
    assert c1.location is not None and c1.location.line == 1
    assert c2.location is not None and c2.location.line == 12
    assert c2.source.kind == "manual" and c2.reviewed and not c2.generated


def test_agent_view_carries_only_id_input_and_answer_format(tmp_path: Path) -> None:
    case = load_cases([write(tmp_path / "a.yaml", GOOD_YAML)])[0]
    view = case.agent_view().to_dict()
    assert set(view) == {"id", "input", "answer_format"}
    assert "24 hours" not in json.dumps(view) and "cancel_reservation" not in json.dumps(view)


@pytest.mark.parametrize("suffix", [".yaml", ".jsonl"])
def test_write_then_load_round_trips(tmp_path: Path, suffix: str) -> None:
    cases = load_cases([write(tmp_path / "a.yaml", GOOD_YAML)])
    out = tmp_path / f"out{suffix}"
    write_cases(out, cases)
    again = load_cases([out])
    assert [c.to_dict() for c in again] == [c.to_dict() for c in cases]
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        (GOOD_YAML.replace("check: set\n", "check: {kind: fuzzy}\n"), 17,
         "unknown check kind 'fuzzy' (valid: exact, set, contains, rubric)"),
        (GOOD_YAML.replace("  category: refuse\n", ""), 12, "missing key `category`"),
        (GOOD_YAML.replace("category: refuse", "category: ''"), 13, "`category` must be a non-empty string"),
        (GOOD_YAML.replace("- id: c2", "- id: c1"), 12, "duplicate case id 'c1' (first at"),
        (GOOD_YAML.replace("    evidence:", "    evidense:"), 11, "unknown key `diagnosis.evidense`"),
        (GOOD_YAML.replace("check: set\n", "check: set\n    oops: a: b\n"), 18, "invalid YAML"),
        (GOOD_YAML.replace("priors", "x") + "  priors: nope\n", 18, "`priors` must be a list"),
    ],
)
def test_bad_yaml_names_file_and_line(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = write(tmp_path / "bad.yaml", text)
    with pytest.raises(InputError) as info:
        load_cases([path])
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert fragment in str(info.value)


def test_bad_jsonl_names_the_line(tmp_path: Path) -> None:
    good = json.dumps({"id": "a", "category": "c", "task": {"input": "x", "expected": 1, "check": "exact"}})
    path = write(tmp_path / "c.jsonl", good + "\n\n{not json}\n")
    with pytest.raises(InputError, match=rf"^{path}:3: invalid JSON"):
        load_cases([path])


def test_check_case_files_collects_every_problem_and_keeps_good_cases(tmp_path: Path) -> None:
    rec = {"id": "a", "category": "c", "task": {"input": "x", "expected": 1, "check": "exact"}}
    lines = [json.dumps(rec), json.dumps({**rec, "id": "b", "category": ""}), json.dumps(rec), "[1"]
    path = write(tmp_path / "c.jsonl", "\n".join(lines) + "\n")
    other = write(tmp_path / "d.txt", "")
    cases, problems = check_case_files([path, other])
    assert [c.id for c in cases] == ["a"]
    assert [str(p.location) for p in problems] == [f"{path}:2", f"{path}:3", f"{path}:4", str(other)]
    assert "duplicate case id 'a'" in problems[1].message


def test_write_cases_refuses_duplicates_and_writes_nothing(tmp_path: Path) -> None:
    case = load_cases([write(tmp_path / "a.yaml", GOOD_YAML)])[0]
    out = tmp_path / "out.yaml"
    with pytest.raises(InputError, match="duplicate case id 'c1'"):
        write_cases(out, [case, case])
    assert not out.exists()


def test_case_equality_ignores_location(tmp_path: Path) -> None:
    (case,) = load_cases([write(tmp_path / "one.yaml", GOOD_YAML.split("- id: c2")[0])])
    assert isinstance(case, Case)
    write_cases(tmp_path / "two.jsonl", [case])
    assert load_cases([tmp_path / "two.jsonl"])[0] == case


def test_jsonl_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    good = json.dumps({"id": "a", "category": "c", "task": {"input": "x", "expected": 1, "check": "exact"}})
    path = tmp_path / "c.jsonl"
    path.write_bytes(good.encode() + b"\n" + b'{"id": "\xff"}\n')
    with pytest.raises(InputError, match=rf"^{path}:2: not UTF-8 text"):
        load_cases([path])


def test_counted_cases_leave_out_generated_cases_waiting_for_review(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    write(tmp_path / "cases" / "a.yaml", GOOD_YAML)
    write(tmp_path / "cases" / "gen.yaml", GOOD_YAML.replace("id: c1", "id: g1").replace("id: c2", "id: g2").replace(
        "  category: refuse\n", "  category: refuse\n  generated: true\n  reviewed: false\n"))
    write(tmp_path / "cases" / ".a.yaml.swp", "not a case file")
    write(tmp_path / "cases" / "notes.txt", "not a case file either")
    assert [c.id for c in load_counted_cases(tmp_path, "cases/*")] == ["c1", "c2", "g1"]
    with pytest.raises(InputError, match="no case files match 'other/\\*'"):
        load_counted_cases(tmp_path, "other/*")


def test_loading_gives_the_cycle_collector_back_as_it_found_it(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.yaml", GOOD_YAML)
    bad = write(tmp_path / "bad.jsonl", "{not json}\n")
    assert gc.isenabled()
    assert [c.id for c in load_cases([path])] == ["c1", "c2"]
    with pytest.raises(InputError):
        load_cases([bad])
    assert gc.isenabled()  # also after an error
    gc.disable()
    try:
        load_cases([path])
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


def test_counted_cases_refuse_files_holding_no_case_that_counts(tmp_path: Path) -> None:
    write(tmp_path / "empty.yaml", "[]\n")
    with pytest.raises(InputError, match="hold no case that counts"):
        load_counted_cases(tmp_path, "*.yaml")


def test_a_value_its_yaml_tag_cannot_hold_is_a_located_error(tmp_path: Path) -> None:
    path = write(tmp_path / "a.yaml", GOOD_YAML.replace('created: "2026-11-01"', "created: !!timestamp nonsense"))
    with pytest.raises(InputError) as info:
        load_cases([path])
    assert str(info.value) == f"{path}:4: invalid YAML: 'nonsense' cannot be read as timestamp"


def test_must_pass_marks_a_case_or_its_whole_category(tmp_path: Path) -> None:
    from frames_cli.formats.case import must_pass_ids

    text = GOOD_YAML.replace("- id: c2\n", "- id: c2\n  must_pass: true\n") + (
        "- id: c3\n  category: cancel\n  must_pass: category\n  task: {input: x, expected: y, check: exact}\n"
    )
    c1, c2, c3 = load_cases([write(tmp_path / "a.yaml", text)])
    assert (c1.must_pass, c2.must_pass, c3.must_pass) == (False, True, "category")
    assert must_pass_ids([c1, c2, c3]) == {"c1", "c2", "c3"}  # c1 shares c3's category
    write_cases(tmp_path / "b.yaml", [c1, c2, c3])
    again = load_cases([tmp_path / "b.yaml"])
    assert [c.must_pass for c in again] == [False, True, "category"]
    assert "must_pass" not in (tmp_path / "b.yaml").read_text(encoding="utf-8").split("- id: c2")[0]
    with pytest.raises(InputError, match=r"a.yaml:13: `must_pass` must be true, false or `category`, got 'always'"):
        load_cases([write(tmp_path / "a.yaml", text.replace("must_pass: true", "must_pass: always"))])


@pytest.mark.parametrize(("value", "key"), [(".nan", "task.expected"), ("-.inf", "task.expected"),
                                            ("{fee: .inf}", "task.input.fields.fee")])
def test_nan_or_infinity_in_a_case_is_a_located_error(tmp_path: Path, value: str, key: str) -> None:
    # issue 15: `expected: .nan` passed validate and evolve; NaN equals no answer and is no JSON.
    if key.endswith("fee"):
        text = (f"- id: n1\n  category: c\n  task:\n    input:\n      text: x\n      fields: {value}\n    expected: "
                f"'no'\n    check: {{kind: exact}}\n")
        line = 6
    else:
        text = (f"- id: n1\n  category: c\n  task:\n    input: {{text: x}}\n    expected: {value}\n    check: "
                f"{{kind: exact}}\n")
        line = 5
    path = write(tmp_path / "bad.yaml", text)
    with pytest.raises(InputError) as info:
        load_cases([path])
    assert str(info.value).startswith(f"{path}:{line}: `{key}` is not a finite number")
