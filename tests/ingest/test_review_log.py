"""Review logs → failing cases, passing cases and priors; bad rows reported with file and line."""

from __future__ import annotations

from pathlib import Path

from frames_cli.errors import Location
from frames_cli.formats.problems import Problem
from frames_cli.ingest.feedback.review_log import APPROVED_KIND, ReviewLogConverter, parse_verdict
from frames_cli.words import policy_sentences

DATA = Path(__file__).parent / "data"

CSV = DATA / "reviews-week12.csv"
POLICY = policy_sentences(DATA / "policies")


def _by_ticket(cases):
    return {c.source.ref.rsplit("(", 1)[-1].rstrip(")"): c for c in cases}


def test_every_bad_row_is_reported_with_file_and_line_and_the_good_rows_import():
    conv = ReviewLogConverter(CSV, policy=POLICY)
    cases = conv.convert()
    errors = {(p.location.line, p.message.split(";")[0].split(" (")[0]) for p in conv.problems if p.severity == "error"}
    assert errors == {
        (6, "no case input"),
        (8, "unknown verdict 'maybe later'"),
        (10, "rejected, but neither a correct answer nor a comment says what was wrong"),
        (14, "row has 10 cells but the header has 8"),
    }
    assert all(str(p.location).startswith(f"{CSV}:") for p in conv.problems)
    warnings = {p.location.line for p in conv.problems if p.severity == "warning"}
    assert warnings == {4, 7}  # the misspelt verdict and the Latin-1 byte
    assert sorted(_by_ticket(cases)) == ["R-101", "R-102", "R-103", "R-106", "R-108", "R-110", "R-112"]
    assert [p.text for p, _ in conv.priors] == [
        "Be more empathetic when the passenger mentions a family emergency, before you explain the cancellation "
        "options."
    ]


def test_rejected_row_becomes_a_failing_case_with_a_diagnosis_record():
    case = _by_ticket(ReviewLogConverter(CSV, policy=POLICY).convert())["R-101"]
    assert case.source.kind == "review-log" and case.category == "cancel"
    assert case.task.expected == "Refuse the cancellation" and case.task.check.kind == "contains"
    assert "ZFA04Y" in case.task.input["text"]
    assert "Cancelled ZFA04Y" in case.diagnosis.symptom and "Refuse the cancellation" in case.diagnosis.symptom
    assert case.diagnosis.notes.endswith("reviewer: anna")
    # "Wrong." is not a rule; the sentence with "can only" is.
    assert case.diagnosis.evidence == [
        "Per policy a flight can only be cancelled if the booking was made within the last 24 hrs, the airline "
        "cancelled it, it is business, or insurance covers the reason."
    ]
    assert case.generated is False and case.reviewed is True


def test_a_paraphrased_rule_keeps_the_reviewers_words_with_the_policy_sentence_beside_and_multiline_cells_survive():
    case = _by_ticket(ReviewLogConverter(CSV, policy=POLICY).convert())["R-110"]
    # The reviewer's sentence is the key; the policy sentence it paraphrases is evidence beside it, never instead.
    assert case.diagnosis.evidence == ["Users can add but not remove checked bags.",
                                       "The user can add but not remove checked bags."]
    assert case.task.input["text"] == "I want to remove a checked bag from 4WQ150\nand get the money back."
    assert "be friendlier" in case.diagnosis.notes


def test_rejected_without_correct_answer_but_quoting_a_rule_is_checked_by_rubric():
    case = _by_ticket(ReviewLogConverter(CSV, policy=POLICY).convert())["R-108"]
    assert case.task.check.kind == "rubric"
    assert case.diagnosis.evidence == ['Policy: "The user cannot add insurance after initial booking."',
                                       "The user cannot add insurance after initial booking."]
    assert (
        case.task.expected == 'The answer must follow: Policy: "The user cannot add insurance after initial booking."'
    )
    assert case.review is None  # a quoted rule is a sure key


def test_approved_rows_are_passing_cases_marked_for_the_regression_pool_and_latin1_is_read():
    by = _by_ticket(ReviewLogConverter(CSV, policy=POLICY).convert())
    assert by["R-102"].source.kind == APPROVED_KIND
    assert by["R-102"].task.expected.startswith("Added one checked bag") and by["R-102"].diagnosis.evidence == []
    # An approved free-text reply is a reference for the judge, not a string to repeat word for word.
    assert by["R-102"].task.check.kind == "rubric"
    assert by["R-106"].task.input["text"] == "Je voudrais ajouter un bagage, merci. Réservation 4WQ150"
    assert by["R-106"].task.expected == "Ajouté un bagage en soute."
    # same input and expected: the same content id, folded into one case when stored
    assert by["R-102"].id == by["R-112"].id


def test_verdict_words_and_misspellings():
    problems: list[Problem] = []
    here = Location("log.csv", 3)
    assert parse_verdict("LGTM", here, problems) == "approved"
    assert parse_verdict("Needs-fix", here, problems) == "rejected"
    assert parse_verdict("aproved", here, problems) == "approved"
    assert parse_verdict(None, here, problems) is None
    assert [str(p) for p in problems] == ["log.csv:3: warning: verdict 'aproved' read as 'approved'"]
    try:
        parse_verdict("ask carl", here, problems)
    except ValueError as exc:
        assert "unknown verdict 'ask carl'" in str(exc)
    else:
        raise AssertionError("an unknown verdict must be refused")


def test_jsonl_log_with_mapping_dotted_keys_and_a_misspelt_column():
    conv = ReviewLogConverter(
        DATA / "reviews-queue-b.jsonl",
        {"input": "conversation.user_text", "output": "agent_reply", "verdict": "decision", "correct": "gold_answer",
         "category": "queue"},
        policy=POLICY,
    )
    cases = conv.convert()
    assert [(p.location.line, p.severity) for p in conv.problems] == [(1, "warning"), (5, "error"), (8, "error")]
    assert "'coment' read as `comment`" in conv.problems[0].message
    assert [(c.source.kind, c.category) for c in cases] == [(APPROVED_KIND, "compensation"),
                                                            ("review-log", "compensation")]
    assert cases[1].task.expected == "No compensation"
    assert cases[1].diagnosis.evidence == [
        "Do not compensate if the user is regular member and has no travel insurance and flies basic economy.",
        "Do not compensate if the user is regular member and has no travel insurance and flies (basic) economy.",
    ]
    assert [p.text for p, _ in conv.priors] == [
        "Always mention the certificate amount per passenger when you offer one.",
        "When adding bags, say the price of each extra bag first.",
        "be friendlier",
    ]
