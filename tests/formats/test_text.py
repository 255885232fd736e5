"""Errors in user text name a line a person can find; written case files stand alone (no YAML aliases)."""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.errors import ConfigError, InputError
from frames_cli.formats.case_files import dump_cases, load_cases
from frames_cli.formats.case_record import case_from_dict
from frames_cli.workspace.config_file import load_config, parse_config

CASE = """\
- id: c1
  category: meals
  task: {input: "Caf\xe9 bill of 50 EUR?", expected: "no", check: {kind: exact}}
"""


def test_non_utf8_case_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_bytes(CASE.encode("latin-1"))
    with pytest.raises(InputError) as caught:
        load_cases([path])
    assert str(caught.value) == f"{path}:3: not UTF-8 text (byte 47)"


def test_non_utf8_frames_yaml_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "frames.yaml").write_bytes("version: 1\n# r\xe9glages\n".encode("latin-1"))
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value) == f"{tmp_path}/frames.yaml:2: not UTF-8 text (byte 14)"


def test_yaml_error_at_the_end_of_frames_yaml_is_on_its_last_line() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("version: 1\nllm:\n  concurrency: [3\n", "frames.yaml")
    assert str(caught.value) == "frames.yaml:3: invalid YAML: expected ',' or ']', but got '<stream end>'"


def test_yaml_error_at_the_end_of_a_case_file_is_on_its_last_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- id: c1\n  category: [meals\n")
    with pytest.raises(InputError) as caught:
        load_cases([path])
    assert str(caught.value) == f"{path}:2: invalid YAML: did not find expected ',' or ']'"


def test_cases_sharing_objects_are_written_without_anchors(tmp_path: Path) -> None:
    evidence = ["Meals are refunded up to 45 EUR a day."]
    records = [
        {"id": f"c{i}", "category": "meals", "task": {"input": "x", "expected": "no", "check": {"kind": "exact"}},
         "diagnosis": {"evidence": evidence}}
        for i in (1, 2)
    ]
    cases = [case_from_dict(r) for r in records]
    cases[1].diagnosis.evidence = cases[0].diagnosis.evidence
    text = dump_cases(cases, ".yaml")
    assert "&id" not in text and "*id" not in text
    assert text.count("Meals are refunded up to 45 EUR a day.") == 2
    path = tmp_path / "out.yaml"
    path.write_text(text)
    assert load_cases([path]) == cases


def test_an_unclosed_quote_is_reported_where_it_opens() -> None:
    from frames_cli.formats.skill_file import parse_skill

    with pytest.raises(InputError) as caught:
        parse_skill('---\nname: "meals\ndescription: d\nlicense: MIT\n---\nbody\n', Path("skills/meals/SKILL.md"))
    assert str(caught.value) == "skills/meals/SKILL.md:2: invalid YAML in front matter: found unexpected end of stream"


def test_cjk_text_has_tokens_sentences_and_rules() -> None:
    from frames_cli.words import rule_sentences, sentences, tokens, word_count

    assert tokens("机构必须 ID") == ["机构", "构必", "必须", "id"]
    assert sentences("为了预防洗钱活动。金融机构必须建立制度。") == ["为了预防洗钱活动。", "金融机构必须建立制度。"]
    assert rule_sentences("为了预防洗钱活动。金融机构必须建立制度。") == ["金融机构必须建立制度。"]
    assert word_count("金融机构 must do") == 6


def test_question_words_carry_no_topic() -> None:
    """"How", "why" and "where" are stop words like "what" and "who": a user's "How do I claim it?"
    shares nothing with an FAQ heading "How to book a hotel" (issue 13: it drew such questions)."""
    from frames_cli.words import tokens
    from frames_cli.sim.matching import bm25_ranked

    assert tokens("How, why, where, whom and whose?") == []
    assert [key for key, _ in bm25_ranked("How do I claim it?", [("faq", "How to book a hotel"),
                                                                 ("claims", "Claim your expenses")])] == ["claims"]
