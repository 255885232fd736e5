"""Answer keys a reviewer would sign (issue 28): the requirements a comment states, whole, and nothing else.

Invariants:
1. The key holds every requirement the reviewer states, each a whole sentence of the comment: never
   a fragment, never a Markdown link target, never policy text; apostrophes are not quotes.
2. Narrative, tone, complaints and names are notes, never the key: also a sentence shaped like a
   rule in plain words that states none (a past event, a consequence for one person, a judgement,
   the agent, a person's state).
3. A comment with no requirement gives no key: a prior (link, "be careful", tone) or a case graded by
   the whole comment (a story), and the account says which and why.
4. A key the reader is unsure of marks its case `review: needed`: it counts nowhere until a person
   writes `review: confirmed`, and importing the log again keeps that confirmation.
5. A model's key is held to the same contract: its items become whole sentences of the comment or
   are dropped, a sentence the rules read as no requirement goes to the notes, and a failed call
   falls back to the rules.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.formats.case_files import load_cases, load_counted_cases
from frames_cli.ingest.keys.answer_key import extract_key
from frames_cli.ingest.keys.answer_key_model import key_from_reply, whole_sentences
from frames_cli.ingest.feedback.review_log import ReviewLogConverter

runner = CliRunner()

#: The 18F rows issue 28 quotes (comments as the hand-written travel log has them), each with the
#: key a reviewer signs. Before this change, 6 of these rows got a fragment, link debris, the
#: exception instead of the rule, or one of three requirements.
ISSUE_ROWS = [
    ("Wrong. Taxis are reimbursable local transportation, receipts over $75. Agent made up a rule, we never say taxis "
     "are banned",
     ["Taxis are reimbursable local transportation, receipts over $75."]),
    ("Nonrefundable fares must be explicitly approved by the authorizing official before the TTS travel team can "
     "approve. Agent should have told her to get the approval email first. María had already booked by then, so this "
     "cost us a week of back and forth.",
     ["Nonrefundable fares must be explicitly approved by the authorizing official before the TTS travel team can "
      "approve.",
      "Agent should have told her to get the approval email first."]),
    ("No. If it's a training conference you must follow the [event request process "
     "instead](#how-can-i-get-my-travel-approved-to-attend-a-training-conference-or-other-event) of an email of "
     "approval. He was pretty confused afterwards.",
     ["If it's a training conference you must follow the event request process instead of an email of approval."]),
    ("When a trip isn't in Concur yet and it's after hours, the traveler fills out GSA form 87, gets the AO's "
     "signature, sends it to the travel team and calls AdTrav. Telling someone 'nothing can be done' the night before "
     "a trip is how we end up with people paying out of pocket. I'd also like the agent to stop saying 'unfortunately' "
     "in every second sentence, it reads as if we don't care.",
     ["When a trip isn't in Concur yet and it's after hours, the traveler fills out GSA form 87, gets the AO's "
      "signature, sends it to the travel team and calls AdTrav."]),
    ('Three things were missing here. The approval email has to name the days you\'re paying for yourself. The '
     'traveler must also paste the acknowledgement: "I understand that I am responsible for any additional costs '
     'incurred for personal travel." International travel to '
     "an event also needs event approval, not just the trip approval. Otherwise fine.",
     ["The approval email has to name the days you're paying for yourself.",
      'The traveler must also paste the acknowledgement: "I understand that I am responsible for any additional costs '
      'incurred for personal travel."',
      "International travel to an event also needs event approval, not just the trip approval."]),
    ("Only short-term relocation (120 days or less) needs no notification. A permanent move needs PeopleOps notified, "
     "and your new duty station has to be updated in GovTA before your first paycheck at the new locality rate. "
     "Kaitlyn asked twice and got the short-term answer both times.",
     ["Only short-term relocation (120 days or less) needs no notification.",
      "A permanent move needs PeopleOps notified, and your new duty station has to be updated in GovTA before your "
      "first paycheck at the new locality rate."]),
]


@pytest.mark.parametrize("comment, key", ISSUE_ROWS)
def test_the_18f_rows_of_issue_28_get_the_key_a_reviewer_signs(comment: str, key: list[str]) -> None:
    read = extract_key(comment)
    assert read.requirements == key
    for item in read.requirements:
        assert "](" not in item and "#how-can" not in item  # never a link target
        assert item[0].isupper() and item.rstrip('"')[-1] in ".!?"  # whole sentences, never "s signature, …"
    assert not any(name in " ".join(read.requirements)
                   for name in ("María", "Kaitlyn", "made up a rule", "pretty confused", "unfortunately"))


def test_apostrophes_are_words_and_double_quotes_stay_inside_their_sentence() -> None:
    read = extract_key("Per diem can't be claimed for a day of leave. The AO's signature is required before the trip. "
                       "He said 'fine'.")
    assert read.requirements == ["Per diem can't be claimed for a day of leave.",
                                 "The AO's signature is required before the trip."]
    quoted = extract_key('Policy: "Refunds go to the original card. Always." The agent ignored it.')
    assert quoted.requirements == ['Policy: "Refunds go to the original card. Always."']


@pytest.mark.parametrize("comment, none", [
    ("https://handbook.tts.gsa.gov/travel-and-leave/travel-guide-faq/#which-receipts-must-i-keep", "link"),
    ("see [underwriting guide §4.2](https://wiki.example-bank.com/underwriting#section-4-2)", "link"),
    ("Be careful with this one.", "vague"),
    ("Tone was curt. Also, tone: the answer was curt and didn't greet the traveler.", "tone"),
    ("The agent read the old handbook. She was upset.", "narrative"),
])
def test_a_comment_without_a_requirement_gives_no_key_and_says_why(comment: str, none: str) -> None:
    read = extract_key(comment)
    assert read.requirements == [] and read.none == none


@pytest.mark.parametrize("comment, key", [
    # A role noun is a rule in the present, a story in the past.
    ("The borrower signs the disclosure before closing. The borrower was annoyed by the wait.",
     ["The borrower signs the disclosure before closing."]),
    # The company's "us" in a rule; the reviewer's "I" never.
    ("Gift cards are sold by our partner, not by us. I had to explain this twice.",
     ["Gift cards are sold by our partner, not by us."]),
    # A participle after a present rule verb is not a story; a past auxiliary is.
    ("Overtime needs a form approved by the manager first. He was told it didn't.",
     ["Overtime needs a form approved by the manager first."]),
    # A correction by contrast, and impersonal permission in another language.
    ("Falsch. Die Gebühr trägt der Verkäufer, nicht der Käufer.",
     ["Die Gebühr trägt der Verkäufer, nicht der Käufer."]),
    ("La reserva se puede cambiar hasta el día anterior. La clienta llamó ayer.",
     ["La reserva se puede cambiar hasta el día anterior."]),
    # A short rule is not an exclamation.
    ("Shipping costs extra. Ugh.", ["Shipping costs extra."]),
])
def test_rules_in_plain_words_and_stories_around_them(comment: str, key: list[str]) -> None:
    assert extract_key(comment).requirements == key


def test_a_second_language_keeps_its_requirement_whole() -> None:
    assert extract_key(
        "Falsch. Bei Krediten über 50.000 € muss ein zweiter Prüfer zustimmen. Herr Becker hat sich schon beschwert."
    ).requirements == ["Bei Krediten über 50.000 € muss ein zweiter Prüfer zustimmen."]
    assert extract_key(
        "Non. Le remboursement doit être fait sur le moyen de paiement d'origine. Le client était pressé."
    ).requirements == ["Le remboursement doit être fait sur le moyen de paiement d'origine."]


def _log(tmp_path: Path, rows: list[tuple[str, str, str]]) -> Path:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "input", "output", "verdict", "comment"])
    writer.writerows((f"R{i}", q, "no", "rejected", c) for i, (q, c, _) in enumerate(rows, start=1))
    path = tmp_path / "log.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_each_row_becomes_a_case_a_prior_or_a_whole_comment_rubric_and_the_account_says_why(tmp_path: Path) -> None:
    path = _log(tmp_path, [
        ("Taxi?", ISSUE_ROWS[0][0], ""),
        ("Receipts?", "https://handbook.tts.gsa.gov/travel-guide-faq/#receipts", ""),
        ("Partner?", "Be careful with this one.", ""),
        ("Rental?", "The agent told him the wrong office. He drove there for nothing.", ""),
    ])
    converter = ReviewLogConverter(path)
    cases = converter.convert()
    assert (
        cases[0].task.expected
        == "The answer must follow: Taxis are reimbursable local transportation, receipts over $75."
    )
    assert cases[0].review is None and cases[0].task.check.kind == "rubric"
    story = cases[1]
    assert story.task.expected.startswith("The answer must satisfy this reviewer's comment: The agent told him the "
                                          "wrong office.")
    assert story.review == "needed"
    fates = [(r.fate, r.reason, r.review) for r in converter.account.rows]
    assert fates[1][0] == "prior" and "only a link" in fates[1][1]
    assert fates[2][0] == "prior" and '("be careful")' in fates[2][1]
    assert fates[3][0] == "case" and fates[3][2].startswith("the comment states no requirement")
    rows = [r.to_json() for r in converter.account.rows]
    assert (
        rows[0]["key"] == ["Taxis are reimbursable local transportation, receipts over $75."]
        and rows[0]["key_by"] == "rules"
    )


def test_an_unsure_key_waits_for_a_person_and_a_confirmation_survives_a_reimport(workspace: Path) -> None:
    log = _log(workspace, [(
        "Can I book this nonrefundable fare?",
        "Nonrefundable fares must be approved by the AO. Agent should have told her to get the approval email first.",
        ""),
        ("Taxi?", ISSUE_ROWS[0][0], "")])
    result = runner.invoke(app, ["ingest", "review-log", str(log), "--repo", str(workspace)])
    assert result.exit_code == 0, result.output
    assert "review: needed (a requirement also tells of a person or an event" in result.stdout
    assert "1 case marked `review: needed`" in result.stdout
    path = workspace / "cases" / "review-log-log.yaml"
    assert "review: needed" in path.read_text(encoding="utf-8")
    waiting = [c for c in load_cases([path]) if c.review == "needed"]
    assert len(waiting) == 1 and waiting[0].id not in {
        c.id for c in load_counted_cases(workspace, "cases/review-log-*.yaml")
    }
    # A person checks the key and confirms it; importing the same log again keeps the confirmation.
    path.write_text(path.read_text(encoding="utf-8").replace("review: needed", "review: confirmed"), encoding="utf-8")
    assert waiting[0].id in {c.id for c in load_counted_cases(workspace, "cases/review-log-*.yaml")}
    assert runner.invoke(app, ["ingest", "review-log", str(log), "--repo", str(workspace)]).exit_code == 0
    assert {c.id: c.review for c in load_cases([path])}[waiting[0].id] == "confirmed"


def test_dry_run_shows_each_key_beside_its_comment_and_writes_nothing(workspace: Path) -> None:
    log = _log(workspace, [("Taxi?", ISSUE_ROWS[0][0], ""), ("Receipts?", "Be careful with this one.", "")])
    result = runner.invoke(app, ["ingest", "review-log", str(log), "--dry-run", "--repo", str(workspace)],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "answer keys" in result.stdout and "• Taxis are reimbursable local transportation" in result.stdout
    assert 'no key: the comment is only a warning ("be careful")' in result.stdout
    assert "dry run: nothing written" in result.stdout
    assert not (workspace / "cases" / "review-log-log.yaml").exists() and not (workspace / "priors.yaml").exists()
    as_json = runner.invoke(app, ["ingest", "review-log", str(log), "--dry-run", "--json", "--repo", str(workspace)])
    data = json.loads(as_json.stdout)
    assert data["dry_run"] is True and data["account"]["rows"][0]["comment"] == ISSUE_ROWS[0][0]
    assert data["account"]["rows"][1]["no_key"] == "vague"


def test_a_qa_notes_column_is_the_comment_without_a_map(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text(
        json.dumps({"question": "Taxi?", "bot_reply": "no", "decision": "fail", "qa_notes": ISSUE_ROWS[0][0]}) + "\n",
        encoding="utf-8",
    )
    converter = ReviewLogConverter(path)
    [case] = converter.convert()
    assert any(f.field == "comment" and f.column == "qa_notes" for f in converter.account.fields)
    assert case.diagnosis.evidence == ["Taxis are reimbursable local transportation, receipts over $75."]


# --- the model reader is held to the same contract ------------------------------------------------

COMMENT = ISSUE_ROWS[1][0]


def test_a_model_key_is_made_of_whole_sentences_of_the_comment() -> None:
    exact = key_from_reply(COMMENT, {"requirements": [ISSUE_ROWS[1][1][0]]}, "m")
    assert exact.requirements == [ISSUE_ROWS[1][1][0]] and exact.unsure == "" and exact.by == "m"
    cut = key_from_reply(COMMENT, {"requirements": ["be explicitly approved by the authorizing official"]}, "m")
    assert cut.requirements == [ISSUE_ROWS[1][1][0]] and cut.unsure.startswith("the model cut a sentence")
    invented = key_from_reply(COMMENT, {"requirements": ["Travelers need AO approval for nonrefundable fares."]}, "m")
    assert invented.requirements == [] and "in no sentence of the comment (dropped)" in invented.unsure
    run, doubt = whole_sentences([" ".join(ISSUE_ROWS[1][1])], COMMENT)
    assert run == ISSUE_ROWS[1][1] and doubt == ""
    link = key_from_reply(
        ISSUE_ROWS[2][0],
        {
            "requirements": [
                "If it's a training conference you must follow the [event request process instead](#how-can-i) of an "
                "email of approval."
            ]
        },
        "m",
    )
    assert link.requirements == ISSUE_ROWS[2][1]


#: Comments written for these tests (no bench row): a rule in plain words, then a sentence of the
#: same shape that states no requirement, and why the reader says so.
TELLS_NOT_REQUIRES = [
    ("Lockers cost $2 a day. The member stayed until closing time.", "past event"),
    ("Orders over $50 ship free. Same problem as yesterday.", "past event"),
    ("Refunds go to the original card. That's a basic mistake.", "a judgement of what happened"),
    ("Returns need the receipt. Not the bot's decision.", "about the agent"),
    ("Parcels are held for 7 days. The tenant lives abroad.", "a fact of one person"),
    ("Late fees are 2% a month. She'll be charged twice now.", "a person's story"),
    ("Lockers cost $2 a day. The rate ended in May, which is where the agent got $1 from.", "about the agent"),
]


@pytest.mark.parametrize(("comment", "why"), TELLS_NOT_REQUIRES)
def test_a_sentence_that_tells_rather_than_requires_is_a_note(comment: str, why: str) -> None:
    read = extract_key(comment)
    rule, story = read.sentences
    assert read.requirements == [rule.text] and read.unsure == ""
    assert story.kind == "narrative" and story.why == why and story.text in read.notes


def test_a_rule_about_anyone_or_a_business_in_plain_words_stays_a_requirement() -> None:
    for rule in ("Each employee gets his or her own locker.", "The bank expects a 20% down payment.",
                 "A human agent reviews every claim over $5,000."):
        assert extract_key(rule).requirements == [rule]


def test_a_rule_after_a_colon_and_the_steps_after_a_lead_in_are_the_key() -> None:
    colon = extract_key("I asked the warehouse: damaged parcels are replaced within 3 days. He waited a week.")
    assert colon.requirements == ["damaged parcels are replaced within 3 days."]
    assert colon.notes[0] == "I asked the warehouse:"
    steps = extract_key("Right order:\n- the member scans the card\n- the desk prints a pass\nSkipped both.")
    assert steps.requirements == ["the member scans the card", "the desk prints a pass"] and steps.unsure == ""
    assert extract_key("Overloads need the dean's form (https://x.example.edu/f).").requirements == [
        "Overloads need the dean's form."]


def test_a_model_sentence_the_rules_read_as_narrative_goes_to_the_notes() -> None:
    comment = "Hail is a comprehensive claim, not liability. He'll be charged the comprehensive deductible."
    both = key_from_reply(comment, {"requirements": comment.split(". ", 1)}, "m")
    assert both.requirements == ["Hail is a comprehensive claim, not liability."] and both.unsure == ""
    dropped = next(s for s in both.sentences if s.text.startswith("He'll"))
    assert dropped.kind == "narrative" and dropped.why.startswith("chosen by the model, but")
    only_story = key_from_reply(comment, {"requirements": ["He'll be charged the comprehensive deductible."]}, "m")
    assert only_story.requirements == [] and "state none by the rules" in only_story.unsure


class _KeyModel:
    """A scripted `keys` model: answers each prompt by the comment it holds; records the prompts."""

    def __init__(self, answers: dict[str, Any]):
        from litellm.llms.custom_llm import CustomLLM

        from frames_cli.llm.transport.providers import make_response

        outer = self
        self.prompts: list[str] = []

        class Handler(CustomLLM):
            def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
                prompt = messages[-1]["content"]
                outer.prompts.append(prompt)
                answer = next(a for marker, a in answers.items() if marker in prompt)
                return make_response(f"scripted/{model}", answer if isinstance(answer, str) else json.dumps(answer),
                                     "stop", 40, 10)

        self.handler = Handler()


@pytest.fixture
def key_model():
    from helpers import install_scripted, remove_scripted

    def install(answers: dict[str, Any]) -> _KeyModel:
        model = _KeyModel(answers)
        install_scripted(model.handler)
        return model

    yield install
    remove_scripted()


def test_models_keys_reads_the_keys_and_falls_back_to_the_rules_when_it_fails(workspace: Path, key_model) -> None:
    (workspace / "frames.yaml").write_text(
        "version: 1\nmodels:\n  keys: scripted/keys\nllm:\n  max_retries: 0\n  repair_turns: 0\n", encoding="utf-8"
    )
    model = key_model(
        {
            "Taxis are": {
                "requirements": ["Taxis are reimbursable local transportation, receipts over $75."],
                "none": "",
                "unsure": "",
            },
            "Be careful": "not json at all",
        }
    )
    log = _log(workspace, [("Taxi?", ISSUE_ROWS[0][0], ""), ("Partner?", "Be careful with this one.", "")])
    result = runner.invoke(app, ["ingest", "review-log", str(log), "--dry-run", "--json", "--repo", str(workspace)])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["account"]["rows"]
    assert (
        rows[0]["key"] == ["Taxis are reimbursable local transportation, receipts over $75."]
        and rows[0]["key_by"] == "scripted/keys"
    )
    assert rows[1]["key_by"] == "rules" and rows[1]["no_key"] == "vague"
    assert len(model.prompts) == 2 and all("<comment>" in p and "whole sentence" in p for p in model.prompts)


def test_a_trace_note_that_repeats_a_tool_error_is_not_the_key(tmp_path: Path) -> None:
    from frames_cli.ingest.feedback.trace import TraceConverter

    error = "Error: reservations must be cancelled within 24 hours of booking"
    trace = {"id": "t1", "input": "Cancel ABC123", "outcome": "failure",
             "steps": [{"state": "s", "action": {"tool": "cancel_reservation"}, "result": error},
                       {"state": "s", "action": {"answer": "Done."}}],
             "label": {"note": f"{error}. The agent must refuse a basic economy cancellation."}}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(trace) + "\n", encoding="utf-8")
    [case] = TraceConverter(path).convert()
    assert case.task.expected == "The answer must follow: The agent must refuse a basic economy cancellation."
    assert case.review == "needed"  # the note held the tool's words too: a person looks


def test_the_shipped_model_recording_answers_every_labelled_rows_current_prompt() -> None:
    """bench/answer_keys.py --model spool/keys replays bench/data/answer_keys/keys.spool-answers.jsonl.xz
    by spool id: a change to the prompt or to a labelled row would leave rows without an answer.
    heldout4/ was written after the recording (its rows wait for answerers; the bench leaves them out)."""
    import lzma
    import sys

    from frames_cli.ingest.keys.answer_key_model import key_request
    from frames_cli.llm.transport.spool import spool_id

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "bench"))
    try:
        import answer_keys as bench
    finally:
        sys.path.remove(str(root / "bench"))
    with lzma.open(bench.RECORDING, "rt", encoding="utf-8") as f:
        recorded = {json.loads(line)["id"] for line in f if line.strip()}
    rows = bench.load()
    assert len(rows) == 160
    assert all(spool_id("keys", key_request(r.comment, r.request).messages, 0) in recorded for r in rows
               if r.part != "heldout4")
