"""Names of a case for the case-value guard (frames_cli/casevalues.py): common words are no names.

Invariants:
1. A capitalised common word of a case's text ("New" of "New York", "DOB") is no name: a rule that
   uses it ("New reservations ...", "Ask for the passenger's DOB.") is kept.
2. A run of capitalised words is one name ("New York"): a rule carrying the whole run is dropped,
   naming it; a word of the run that is no common word ("Sanchez") is a name alone too.
3. A place that is no common word ("Philadelphia") is still a name, and a short field value
   ("San Antonio") is one name.
"""

from __future__ import annotations

from frames_cli.casevalues import proper_nouns
from frames_cli.evolution.propose.case_index import CaseValues
from frames_cli.formats.case import Case
from frames_cli.formats.case_record import case_from_dict

POLICY = "The user must provide their user id. New reservations can be paid with at most one certificate."


def _case() -> Case:
    return case_from_dict({
        "id": "c1", "category": "book", "source": {"kind": "test", "ref": "c1"}, "created": "2026-12-01",
        "task": {"input": {"text": "I want to fly from New York to Philadelphia with Raj Sanchez, DOB 2001-04-12.",
                           "fields": {"customer": {"city": "San Antonio"}}},
                 "expected": {"actions": []}, "check": {"kind": "exact"}, "answer_format": "json"},
        "diagnosis": {"evidence": ["Agent books the flight."]},
    })


def _values() -> CaseValues:
    return CaseValues.build([_case()], [POLICY])


def test_a_capitalised_common_word_is_no_name() -> None:
    values = _values()
    assert values.specific("New bookings may use one certificate.") == []
    assert values.specific("Ask for the passenger's DOB before booking.") == []
    assert "New" not in proper_nouns("I fly from New York, DOB unknown.") and "DOB" not in proper_nouns(
        "I fly, DOB unknown."
    )


def test_a_run_of_capitalised_words_is_one_name_and_its_rare_words_are_names_too() -> None:
    values = _values()
    assert [h.value for h in values.specific("Flights from New York leave at noon.")] == ["New York"]
    assert [h.value for h in values.specific("Book the trip for Sanchez.")] == ["Sanchez"]
    assert [h.value for h in values.specific("Fly to Philadelphia.")] == ["Philadelphia"]
    assert [h.value for h in values.specific("Customers from San Antonio get a seat.")] == ["San Antonio"]
    assert "carries a case value: `New York` (from case c1)" in values.why_not(
        'Add the rule: "Flights from New York leave at noon."'
    )
