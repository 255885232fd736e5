"""JSON Lines and YAML rows share one reader: the same rows give the same records and problems."""

from __future__ import annotations

from pathlib import Path

from frames_cli.ingest.rows.records import FieldResolver, read_records

ALIASES = {"input": ("input", "question"), "comment": ("comment", "notes")}

JSONL = """\
{"question": "one", "Coment": "a", "seat": 3}

[1, 2]
{"question": "two", "Coment": "b"}
{"question": "three",
"""

YAML = """\
- {question: one, Coment: a, seat: 3}
- [1, 2]
- {question: two, Coment: b}
- {question: three, when: !!python/name:os.system ''}
"""


def _read(path: Path, text: str):
    path.write_text(text, encoding="utf-8")
    return read_records(path, FieldResolver({}, ALIASES))


def test_jsonl_and_yaml_rows_read_alike(tmp_path: Path) -> None:
    jsonl, yaml = _read(tmp_path / "rows.jsonl", JSONL), _read(tmp_path / "rows.yaml", YAML)
    expected = [({"input": "one", "comment": "a"}, {"seat": 3}), ({"input": "two", "comment": "b"}, {})]
    assert [(r.values, r.extra) for r in jsonl.records] == expected
    assert [(r.values, r.extra) for r in yaml.records] == expected
    assert [r.location.line for r in jsonl.records] == [1, 4]
    assert [r.location.line for r in yaml.records] == [1, 3]
    # One warning for the misspelt key however many rows carry it; each bad row an error, skipped.
    assert [(p.location.line, p.severity, p.message.split(":")[0].split(",")[0]) for p in jsonl.problems] == [
        (1, "warning", "column 'Coment' read as `comment` (closest known name; use --map to be explicit)"),
        (3, "error", "expected a JSON object"),
        (5, "error", "invalid JSON"),
    ]
    assert [(p.location.line, p.severity, p.message.split(":")[0].split(",")[0]) for p in yaml.problems] == [
        (1, "warning", "column 'Coment' read as `comment` (closest known name; use --map to be explicit)"),
        (2, "error", "expected a mapping"),
        (4, "error", "invalid YAML value"),
    ]
    assert all(p.message.endswith("; skipped") for p in jsonl.problems + yaml.problems if p.severity == "error")


def test_a_malformed_tagged_scalar_is_a_located_bad_row_not_a_crash(tmp_path: Path) -> None:
    rows = ("- {question: one}\n- {question: !!int x}\n- {question: !!bool maybe}\n- {question: !!timestamp nonsense}\n"
            "- {question: five}\n")
    result = _read(tmp_path / "rows.yaml", rows)
    assert [r.values["input"] for r in result.records] == ["one", "five"]
    assert [(p.location.line, p.severity) for p in result.problems] == [(2, "error"), (3, "error"), (4, "error")]
    assert all("explicit tag" in p.message for p in result.problems)
