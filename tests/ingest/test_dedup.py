"""Duplicate detection across sources: same input and expected → one case, every source kept in also_from."""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.errors import InputError
from frames_cli.formats.case_files import load_cases, write_cases
from frames_cli.ingest.cases.dedup import content_key, default_check, make_case, merge_duplicates, store_cases


def _case(kind: str, ref: str, text: str, expected, category: str = "cancel"):
    return make_case(kind, ref, text=text, expected=expected, category=category)


def test_content_key_ignores_case_spacing_and_key_order_but_not_content():
    a = content_key({"text": "Cancel  ZFA04Y please", "fields": {"b": 1, "a": 2}}, "Refuse")
    b = content_key({"fields": {"a": 2, "b": 1}, "text": "cancel zfa04y please "}, "refuse")
    assert a == b
    assert a != content_key({"text": "Cancel ZFA04Y please", "fields": {}}, "Refuse")
    assert a != content_key({"text": "Cancel ZFA04Y please", "fields": {"b": 1, "a": 2}}, "Cancel it")


def test_merge_folds_duplicates_into_the_first_and_records_both_sources():
    old = _case("tau2", "tasks.json#3", "Cancel ZFA04Y", "refuse")
    new = [_case("review-log", "log.csv:4", "cancel zfa04y", "Refuse"), _case("trace", "t.jsonl:2", "Other", "x")]
    result = merge_duplicates([old], new)
    assert [c.source.ref for c in result.added] == ["t.jsonl:2"]
    assert [(s.kind, s.ref) for s in old.also_from] == [("review-log", "log.csv:4")]
    assert result.grown == {old.id: old} and result.duplicates == [("log.csv:4", old.id)]
    again = merge_duplicates([old], [_case("review-log", "log.csv:4", "Cancel ZFA04Y", "refuse")])
    assert again.grown == {} and len(old.also_from) == 1  # the same source is not recorded twice


def test_a_different_case_with_a_clashing_id_gets_a_suffix():
    first = _case("import", "a:1", "one", "x")
    second = _case("import", "a:2", "two", "y")
    second.id = first.id
    assert merge_duplicates([first], [second]).added[0].id == f"{first.id}-2"


def test_store_replaces_its_own_file_rewrites_grown_files_and_is_idempotent(tmp_path: Path):
    cases_dir = tmp_path / "cases"
    other = cases_dir / "tau2-airline.yaml"
    write_cases(other, [_case("tau2", "tasks.json#3", "Cancel ZFA04Y", "refuse")])
    out = cases_dir / "review-log-week12.yaml"
    batch = [_case("review-log", "w.csv:2", "cancel ZFA04Y", "refuse"),
             _case("review-log", "w.csv:3", "Add a bag", "ok", "baggage")]
    result = store_cases(cases_dir, out, batch, replace=True)
    assert [c.source.ref for c in result.written] == ["w.csv:3"] and result.updated_files == [other]
    assert [(s.kind, s.ref) for s in load_cases([other])[0].also_from] == [("review-log", "w.csv:2")]
    before = (out.read_bytes(), other.read_bytes())
    store_cases(cases_dir, out, [_case("review-log", "w.csv:2", "cancel ZFA04Y", "refuse"),
                                 _case("review-log", "w.csv:3", "Add a bag", "ok", "baggage")], replace=True)
    assert (out.read_bytes(), other.read_bytes()) == before


def test_store_append_keeps_reviewed_flags_and_refuses_a_broken_target(tmp_path: Path):
    cases_dir = tmp_path / "cases"
    out = cases_dir / "generated.yaml"
    first = make_case("generator", "p.md:1-3", text="q1", expected="a", category="c", generated=True, reviewed=False)
    store_cases(cases_dir, out, [first], replace=False)
    text = out.read_text().replace("reviewed: false", "reviewed: true")
    out.write_text(text)
    second = make_case("generator", "p.md:5-9", text="q2", expected="b", category="c", generated=True, reviewed=False)
    store_cases(cases_dir, out, [second], replace=False)
    assert [(c.task.input["text"], c.reviewed) for c in load_cases([out])] == [("q1", True), ("q2", False)]
    out.write_text(text + "- id: broken\n")
    with pytest.raises(InputError, match="has bad records"):
        store_cases(cases_dir, out, [second], replace=False)


def test_default_check_by_answer_shape():
    assert [default_check(e).kind for e in (["a", "b"], "refuse", "transfer to a human agent",
                                            "Added one checked bag, no charge", 5, {"a": 1})] == [
        "set", "contains", "contains", "rubric", "exact", "exact"]
