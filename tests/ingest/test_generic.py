"""Generic case import from YAML, CSV/TSV and JSON Lines with a field mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.errors import InputError
from frames_cli.ingest.feedback.generic import FIELDS, GenericConverter
from frames_cli.ingest.rows.records import parse_mapping

DATA = Path(__file__).parent / "data"


def test_yaml_with_mapping_reports_bad_items_by_line():
    conv = GenericConverter(DATA / "qa-cases.yaml",
                            parse_mapping(["category=topic", "evidence=rule,check=scoring"], FIELDS))
    cases = conv.convert()
    assert [(p.location.line, p.severity) for p in conv.problems] == [(14, "error"), (15, "error"), (17, "error")]
    assert "expected a mapping" in conv.problems[0].message
    assert "missing expected" in conv.problems[1].message
    assert "unknown check kind 'fuzzy'" in conv.problems[2].message
    assert [c.category for c in cases] == ["modify", "booking", "booking"]
    first, second, third = cases
    assert first.diagnosis.evidence == ["Basic economy flights cannot be modified."]
    assert second.task.expected == "5" and second.task.check.kind == "exact"
    assert third.task.expected == ["credit card", "gift card", "travel certificate"] and third.task.check.kind == "set"
    assert first.source.kind == "import" and first.source.ref == f"{DATA / 'qa-cases.yaml'}:2"


def test_tsv_with_foreign_headers_fields_and_latin1():
    conv = GenericConverter(
        DATA / "fragen.tsv",
        parse_mapping(["input=Frage,expected=Antwort,category=Kategorie,fields.user_id=Benutzer-ID"], FIELDS),
        check="contains",
    )
    cases = conv.convert()
    assert [(p.location.line, p.severity) for p in conv.problems] == [(3, "warning"), (5, "error")]
    assert [c.task.input for c in cases] == [
        {"text": "Kann ich einen Basic-Economy-Flug umbuchen?", "fields": {"user_id": "mia_li_3668"}},
        {"text": "Wie viele Freigepäckstücke hat ein Gold-Mitglied in Economy?", "fields": {}},
    ]
    assert {c.task.check.kind for c in cases} == {"contains"}


def test_mapping_errors_name_the_problem():
    with pytest.raises(InputError, match="FIELD=COLUMN"):
        parse_mapping(["input"], FIELDS)
    with pytest.raises(InputError, match="unknown field 'answer'") as unknown:
        parse_mapping(["answer=col"], FIELDS)
    # A prefix field is shown as the form it takes, not as a bare "fields.".
    assert str(unknown.value).endswith(", fields.NAME)")
    with pytest.raises(InputError, match="unknown check kind"):
        GenericConverter(DATA / "qa-cases.yaml", check="fuzzy").convert()


def test_every_feedback_converter_is_registered_under_its_kind():
    from frames_cli.registry import CONVERTERS

    for name in ("review-log", "trace", "import"):
        assert CONVERTERS.load(name).kind == name


def test_yaml_dates_become_iso_text(tmp_path: Path):
    path = tmp_path / "dates.yaml"
    path.write_text("- question: When does flight HAT001 leave?\n  answer: 2024-05-20\n  fields.when: 2024-05-20 "
                    "08:00:00\n",
                    encoding="utf-8")
    [case] = GenericConverter(path, parse_mapping(["fields.when=fields.when"], FIELDS)).convert()
    assert case.task.expected == "2024-05-20" and case.task.input["fields"] == {"when": "2024-05-20T08:00:00"}
