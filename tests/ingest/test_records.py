"""The shared row reader: per-line decoding, header matching, located problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.errors import InputError
from frames_cli.ingest.rows.records import FieldResolver, decode_lines, read_records

ALIASES = {"input": ("input", "question"), "comment": ("comment", "notes")}


def test_only_the_invalid_bytes_of_a_line_are_read_as_latin1_and_a_bom_is_dropped():
    data = "\ufeffa,b\nCafé ".encode("utf-8") + "crème".encode("latin-1") + b" ok\r\nlast\n"
    lines, problems = decode_lines(Path("x.csv"), data)
    assert lines == ["a,b", "Café crème ok", "last"]
    assert [str(p) for p in problems] == ["x.csv:2: warning: 1 byte(s) not UTF-8; read as Latin-1"]


def test_headers_are_matched_by_alias_mapping_and_close_spelling():
    resolver = FieldResolver({"input": "Customer Message"}, ALIASES)
    found, warnings = resolver.resolve(["customer_message", "Coment", "content"])
    assert found == {"input": "customer_message", "comment": "Coment"}
    assert warnings == ["column 'Coment' read as `comment` (closest known name; use --map to be explicit)"]
    assert FieldResolver({}, ALIASES).resolve(["content", "remarks"]) == ({}, [])


def test_csv_rows_start_lines_survive_multiline_cells_and_blank_rows(tmp_path: Path):
    path = tmp_path / "log.csv"
    path.write_text('question,notes\n"two\nlines",x\n,\nthree,"a,b",extra\nfour,\n', encoding="utf-8")
    result = read_records(path, FieldResolver({}, ALIASES))
    assert [(r.location.line, r.values) for r in result.records] == [
        (2, {"input": "two\nlines", "comment": "x"}), (6, {"input": "four"})]
    assert [(p.location.line, p.severity) for p in result.problems] == [(5, "error")]


def test_whole_file_faults_raise(tmp_path: Path):
    broken = tmp_path / "cases.yaml"
    broken.write_text("- question: [unclosed\n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid YAML") as info:
        read_records(broken, FieldResolver({}, ALIASES))
    assert info.value.location.path == broken
    with pytest.raises(InputError, match="unknown format"):
        read_records(tmp_path / "log.xlsx", FieldResolver({}, ALIASES))
    with pytest.raises(InputError, match="cannot read"):
        read_records(tmp_path / "missing.csv", FieldResolver({}, ALIASES))


def test_an_unclosed_quote_is_one_bad_row_not_the_rest_of_the_file(tmp_path: Path):
    path = tmp_path / "log.csv"
    path.write_text('question,notes\none,"he said ""no""\ntwo,"fine"x\nthree,ok\n', encoding="utf-8")
    result = read_records(path, FieldResolver({}, ALIASES))
    assert [(r.location.line, r.values["input"]) for r in result.records] == [(4, "three")]
    assert [(p.location.line, p.message.split(" (")[0]) for p in result.problems] == [
        (2, "cannot read this row"), (3, "cannot read this row")]
