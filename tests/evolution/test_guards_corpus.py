"""The proposal guards on real text: the labelled corpus of bench/data/guards/ (issue 27).

Invariants:
1. The five good rules of the real-model trials that the old stub pattern dropped (four texts:
   "paid with, or refunded to, …", two "provides for," / "provide for,", "… changed to." twice)
   pass every guard, proposed for their skill and citing their cases.
2. The junk issue 27 quotes is dropped: the fragment "s signature, …", the client-visit story,
   "Also, tone: the answer was curt.", "Greet the customer by name …" for the international-travel
   skill, and the grader-pleasing "plain digits without thousands separators" rule.
3. Over the whole corpus, no line labelled good is dropped (bench/guards.py prints the rest).
"""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from frames_cli.evolution.propose.case_index import CaseValues

ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def _bench():
    spec = importlib.util.spec_from_file_location("bench_guards", ROOT / "bench" / "guards.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_guards"] = module
    spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=2)
def _index(workspace: str) -> CaseValues:
    return _bench().workspace_index(workspace)


def _line(text: str):
    return next(line for line in _bench().load_corpus() if line.text == text)


GOOD = [
    "The cabin of a reservation, including a basic economy one, can be changed without changing its flights, for all "
    "flights and passengers at once, and the fare difference at current prices is paid with, or refunded to, one "
    "payment method from the user's profile.",
    "A request that the policy does not allow, or that no policy rule provides for, must be denied with the reason "
    "rather than transferred, and a user's wish to speak to a supervisor is not by itself a reason to transfer when "
    "the request can be handled or must be denied under the policy.",
    "A request that the policy does not allow, such as compensation or a refund the policy does not provide for, must "
    "be denied with the reason and not transferred to a human agent.",
    "Decide whether a reservation is a business flight by its cabin at the time of cancellation, including a cabin the "
    "user has just changed to.",
]


@pytest.mark.parametrize("text", GOOD)
def test_the_good_rules_the_stub_pattern_dropped_pass_every_guard(text: str) -> None:
    line = _line(text)
    assert line.good and line.workspace == "airline"
    assert _index("airline").findings(f'Add the rule: "{text}"', line.skill, line.cases, [text]) == []


@pytest.mark.parametrize(("text", "skill", "guard"), [
    ("s signature, send it to the travel team and call AdTrav.", "after-hours-emergency-travel-authorizations",
     "fragment"),
    ("it caused the traveler to cancel a client visit that the project had been planning for six weeks.",
     "book-lodging", "fragment"),
    ("Also, tone: the answer was curt.", "claim-local-transportation-expenses", "narrative"),
    ("Greet the customer by name at the start of every reply.", "international-travel", "off the failure"),
])
def test_the_junk_a_simulated_review_log_run_let_through_is_dropped(text: str, skill: str, guard: str) -> None:
    line = _line(text)
    assert not line.good
    # The international-travel skill's own failure: the review log's T-201 (conference in Lisbon).
    cases = (
        line.cases
        if skill != "international-travel"
        else (_line("International travel requires Salesforce event approval, regardless of funding source.").cases)
    )
    found = dict(_index("18f").findings(f'Add the rule: "{text}"', skill, cases, [text]))
    assert guard in found


def test_the_grader_pleasing_rule_is_dropped_as_not_in_the_policy() -> None:
    line = _line("Write monetary amounts in replies to the user as plain digits without thousands separators.")
    assert not line.good
    found = dict(_index("airline").findings(f'Add the rule: "{line.text}"', line.skill, line.cases, [line.text]))
    assert "not in the policy" in found and "separator" in found["not in the policy"]


def test_no_good_line_of_the_corpus_is_dropped() -> None:
    lines = _bench().load_corpus()
    verdicts = _bench().verdicts(lines)
    assert [(line.id, verdicts[line.id]) for line in lines if line.good and verdicts[line.id]] == []


RUN = "20261201-000000-abcdef"


def test_a_run_records_its_guard_rules_and_a_resumed_older_run_says_they_changed() -> None:
    from frames_cli.errors import Location
    from frames_cli.evolution.propose.guards import GUARD_RULES
    from frames_cli.evolution.state.records import RunState
    from frames_cli.evolution.run.snapshot import (
        GUARD_RULES_KEY, changed_since, guard_rules_note, run_fingerprint, run_snapshot,
    )
    from frames_cli.workspace.config import FramesConfig

    now = run_snapshot(FramesConfig())
    older = {k: v for k, v in now.items() if k != GUARD_RULES_KEY}  # recorded before rules were versioned
    record = {**RunState(run_id=RUN, base="abc", config=older).to_json(), "schema": 2}
    state = RunState.from_json(record, Location("state.json"))
    note = guard_rules_note(state, now)
    assert note is not None and (note.then, note.now) == (1, GUARD_RULES)
    assert f"rules 1 → {GUARD_RULES}" in str(note) and f"run {RUN} started" in str(note)
    assert changed_since(state, now, []) == []  # not a frames.yaml setting: said by the note alone
    assert guard_rules_note(RunState(run_id=RUN, base="abc", config=now), now) is None
    # Same cases and settings under other rules are other work: `frames evolve` runs again.
    assert run_fingerprint([], now) != run_fingerprint([], older)
