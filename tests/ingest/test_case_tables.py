"""Case tables with nested records (an InstructLab qna.yaml), list indexes in dotted paths, and ids
taken from the file. Each test holds the smallest input that showed one defect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.errors import InputError
from frames_cli.formats.case_files import load_cases
from frames_cli.ingest.feedback.generic import GenericConverter
from frames_cli.ingest.rows.nested import lookup

DATA = Path(__file__).parent / "data"
runner = CliRunner()


def test_instructlab_qna_is_one_case_per_question_with_the_parent_context_as_evidence(workspace: Path):
    result = runner.invoke(app, ["ingest", "cases", str(DATA / "qna.yaml"), "--records",
                                 "seed_examples.questions_and_answers",
                                 "--repo", str(workspace), "--json"])
    assert result.exit_code == 0, result.output
    cases = load_cases([workspace / "cases" / "import-qna.yaml"])
    assert [c.task.input["text"] for c in cases] == [
        "On what scale do examiners rate capital adequacy?", "What does a capital rating of 1 mean?",
        "Over what horizon is liquidity reviewed?"]
    assert cases[0].task.expected == "On a scale of 1 to 5."
    assert cases[0].diagnosis.evidence == ["Examiners rate capital adequacy on a scale of 1 to 5.",
                                           "A rating of 1 means capital is strong for the bank's risk profile."]
    assert cases[2].diagnosis.evidence == ["Liquidity is reviewed against the bank's funding needs over the next 90 "
                                           "days."]
    rows = json.loads(result.stdout)["account"]["rows"]
    assert [r["location"].rsplit(":", 1)[1] for r in rows] == ["12", "14", "18"]  # each question's own line


def test_a_nested_file_without_records_names_the_lists_to_choose_from(tmp_path: Path):
    with pytest.raises(InputError,
                       match=r"--records \(lists here: seed_examples, seed_examples.questions_and_answers\)"):
        GenericConverter(DATA / "qna.yaml").convert()


def test_records_path_accepts_star_markers_and_json(tmp_path: Path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"seed_examples": [{"context": "C",
                                                   "questions_and_answers": [{"question": "Q", "answer": "A"}]}]}))
    [case] = GenericConverter(path, records="seed_examples[*].questions_and_answers[*]").convert()
    assert (case.task.input["text"], case.task.expected, case.diagnosis.evidence) == ("Q", "A", ["C"])


def test_dotted_paths_index_lists(tmp_path: Path):
    assert lookup({"messages": [{"content": "hi"}, {"content": "yo"}]}, "messages.1.content") == "yo"
    assert lookup({"messages": [{"content": "hi"}]}, "messages[0].content") == "hi"
    assert lookup({"messages": []}, "messages.0.content") is None
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"messages": [{"content": "Refund?"}, {"content": "no"}]}) + "\n")
    [case] = GenericConverter(path, {"input": "messages.0.content", "expected": "messages[1].content"}).convert()
    assert (case.task.input["text"], case.task.expected) == ("Refund?", "no")


def test_map_id_sets_the_case_id(workspace: Path):
    path = workspace / "c.csv"
    path.write_text("id,question,answer\nQ-7,Refund?,no\nbad id!,x,y\n")
    result = runner.invoke(app, ["ingest", "cases", str(path), "--map", "id=id", "--repo", str(workspace)])
    assert result.exit_code == 0, result.output
    [case] = load_cases([workspace / "cases" / "import-c.yaml"])
    assert case.id == "Q-7" and case.source.ref == "c.csv:2 (Q-7)"
    assert "c.csv:3 [bad id!]: skipped: id 'bad id!' cannot be a case id" in result.stdout
