"""Review logs as reviewers write them: every row accounted for, verdict spellings, sniffed delimiters,
rules that are rules (not the agent's quoted wrong answer), the reviewer's row id and workspace paths.

Each test holds the smallest file that showed one defect.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.formats.case_files import load_cases
from frames_cli.ingest.feedback.review_log import ReviewLogConverter, parse_verdict
from frames_cli.ingest.keys.answer_key import extract_key, wrong_claims
from frames_cli.words import rule_sentences

runner = CliRunner()


def _ingest(workspace: Path, name: str, text: str, *extra: str):
    path = workspace / name
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["ingest", "review-log", str(path), "--repo", str(workspace), *extra])
    return result, path


def test_agent_decision_column_is_read_and_every_row_has_a_fate(workspace: Path):
    text = ("request,agent_decision,verdict,comment\nCancel ABC123,cancelled,approved,\n"
            "Refund?,refunded,rejected,Refunds are mandatory only within 24 hours.\n")
    result, _ = _ingest(workspace, "log.csv", text, "--json")
    assert result.exit_code == 0, result.output
    account = json.loads(result.stdout)["account"]
    assert {"field": "output", "column": "agent_decision", "how": "name"} in account["fields"]
    assert [(r["location"], r["fate"]) for r in account["rows"]] == [("log.csv:2", "passing case"),
                                                                     ("log.csv:3", "case")]
    assert account["counts"] == {"case": 1, "passing case": 1, "prior": 0, "duplicate": 0, "skipped": 0}


def test_an_unused_column_that_looks_like_a_field_gets_a_map_hint(workspace: Path):
    text = "request,verdict,bot_answer_text\nCancel ABC123,approved,cancelled\n"
    result, _ = _ingest(workspace, "log.csv", text)
    assert (
        "column 'bot_answer_text' not used; it looks like a known field: --map output=bot_answer_text" in result.stdout
    )
    # the approved row without an output is not dropped silently: its fate names the fix
    assert (
        "log.csv:2: skipped: approved, but neither the agent's output nor a correct answer is given (map the column "
        "with --map output=COLUMN)"
        in result.stdout
    )


def test_advice_rows_and_duplicates_are_named_in_the_account(workspace: Path):
    text = "input,output,verdict,comment\nQ,A,approved,\nQ,A,approved,\nX,Y,advice,Be friendlier.\n"
    result, _ = _ingest(workspace, "log.csv", text)
    assert result.exit_code == 0, result.output
    assert "log.csv:3: duplicate: same input and expected answer as case review-log-approved-" in result.stdout
    assert "log.csv:4: prior: the verdict says advice" in result.stdout


@pytest.mark.parametrize("word,verdict",
                         [("1", "approved"), ("0", "rejected"), ("True", "approved"), ("false", "rejected"),
                                          ("yes", "approved"), ("no", "rejected"), ("pass", "approved"),
                                          ("fail", "rejected"),
                                          ("1.0", "approved")])
def test_verdict_spellings(word: str, verdict: str):
    assert parse_verdict(word, None, []) == verdict  # type: ignore[arg-type]


def test_json_approved_false_is_a_rejection_not_a_prior(tmp_path: Path):
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"input": "Refund my basic economy ticket", "output": "Refunded", "approved": False,
                                "correct": "refuse"}) + "\n")
    converter = ReviewLogConverter(path)
    cases = converter.convert()
    assert [c.source.kind for c in cases] == ["review-log"] and cases[0].task.expected == "refuse"
    assert converter.priors == []


def test_semicolon_csv_is_sniffed(workspace: Path):
    result, _ = _ingest(workspace, "log.csv", "input;output;verdict\nCancel ABC123;cancelled;approved\n")
    assert result.exit_code == 0, result.output
    assert "log.csv:1: warning: read as ';'-separated" in result.stderr
    assert len(load_cases([workspace / "cases" / "review-log-log.yaml"])) == 1


def test_a_quoted_wrong_answer_is_not_the_rule():
    comment = 'The agent wrote "basic economy tickets are always fully refundable" which is false.'
    assert rule_sentences(comment) == [] and extract_key(comment).requirements == []
    assert wrong_claims(comment) == ["basic economy tickets are always fully refundable"]
    assert rule_sentences('Per policy "basic economy tickets are never refundable".') == [
        "basic economy tickets are never refundable"
    ]


def test_quoted_wrong_answer_case_rewards_the_policy_not_the_claim(tmp_path: Path):
    path = tmp_path / "log.csv"
    path.write_text('input,output,verdict,comment\nRefund?,Yes,rejected,"The agent wrote ""basic economy tickets are '
                    'always fully refundable"" which is false."\n')
    policy = ["Basic economy tickets are not refundable.", "Gold members get 3 free bags."]
    case = ReviewLogConverter(path, policy=policy, evidence_match=0.5).convert()[0]
    # The key holds what the reviewer wrote: the claim a right answer must not make; the policy
    # sentence it contradicts is evidence for diagnosis, never the key.
    assert case.task.expected == 'The answer must not claim: "basic economy tickets are always fully refundable".'
    assert case.diagnosis.evidence == ["Basic economy tickets are not refundable."]


def test_mandatory_and_should_on_a_rejected_row_are_rules(tmp_path: Path):
    path = tmp_path / "log.csv"
    path.write_text("input,output,verdict,comment\nA,x,rejected,Identity verification is mandatory.\nB,y,rejected,The "
                    "agent should have asked for the reservation id.\n")
    converter = ReviewLogConverter(path)
    cases = converter.convert()
    assert [c.diagnosis.evidence for c in cases] == [["Identity verification is mandatory."],
                                                     ["The agent should have asked for the reservation id."]]
    assert converter.priors == []


def test_reviewer_row_id_and_workspace_relative_path_in_the_source_ref(workspace: Path):
    (workspace / "logs").mkdir()
    result, _ = _ingest(workspace, "logs/log.csv",
                        "row_id,input,output,verdict\nTR-101,Cancel ABC123,cancelled,approved\n")
    assert result.exit_code == 0, result.output
    case = load_cases([workspace / "cases" / "review-log-log.yaml"])[0]
    assert case.source.ref == "logs/log.csv:2 (TR-101)"
    assert "logs/log.csv:2 [TR-101]: passing case" in result.stdout


def test_a_file_outside_the_workspace_is_named_without_its_machine_path(workspace: Path, tmp_path: Path):
    outside = tmp_path / "elsewhere" / "log.csv"
    outside.parent.mkdir()
    outside.write_text("input,output,verdict\nCancel ABC123,cancelled,approved\n")
    result = runner.invoke(app, ["ingest", "review-log", str(outside), "--repo", str(workspace)])
    assert result.exit_code == 0, result.output
    assert load_cases([workspace / "cases" / "review-log-log.yaml"])[0].source.ref == "log.csv:2"


def test_verdict_that_looks_like_an_emoji_code_is_printed_as_written(workspace: Path):
    result, _ = _ingest(workspace, "log.csv", "input,output,verdict\nA,x,:smile:\nB,y,approved\n")
    assert "unknown verdict ':smile:'" in result.stdout and "😄" not in result.stdout + result.stderr
