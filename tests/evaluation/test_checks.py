"""Check kinds: exact, set with argument matching, contains; the rubric judge through the simulator."""

from __future__ import annotations


from frames_cli.evaluation.checks import ContainsCheck, ExactCheck, RubricCheck, SetCheck, same
from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task
from frames_cli.llm.client.client import ModelClient


def case(expected: object, kind: str, **options: object) -> Case:
    return Case("c1", "cat", Source("manual"), "",
                Task({"text": "q", "fields": {}}, expected, Check(kind, dict(options))), Diagnosis())


CANCEL = {"name": "cancel_reservation", "arguments": {"reservation_id": "ABC123"}}
UPGRADE = {"name": "update_reservation_flights",
           "arguments": {"reservation_id": "ABC123", "cabin": "business",
                         "flights": [{"flight_number": "HAT1", "date": "2024-05-20"},
                                     {"flight_number": "HAT2", "date": "2024-05-21"}]}}


def test_set_matches_in_any_order_with_extra_arguments_allowed() -> None:
    c = case({"actions": [UPGRADE, CANCEL]}, "set", field="actions")
    got = {"actions": [
        {"name": "Cancel_Reservation", "arguments": {"reservation_id": "abc123", "reason": "sick"}},
        {"name": "update_reservation_flights",
         "arguments": {**UPGRADE["arguments"], "flights": UPGRADE["arguments"]["flights"][::-1]}},
    ]}
    verdict = SetCheck().check(c, got)
    assert verdict.passed, verdict.reason


def test_set_reports_missing_and_unexpected_items() -> None:
    c = case({"actions": [UPGRADE, CANCEL]}, "set", field="actions")
    wrong = {**UPGRADE, "arguments": {**UPGRADE["arguments"], "cabin": "economy"}}
    verdict = SetCheck().check(c, {"actions": [wrong, CANCEL, CANCEL]})
    assert not verdict.passed
    assert verdict.reason.startswith('missing update_reservation_flights(cabin="business", flights=[{"date": '
                                     '"2024-05-20"')
    assert 'unexpected update_reservation_flights(cabin="economy"' in verdict.reason
    assert verdict.reason.endswith('; cancel_reservation(reservation_id="ABC123")')


def test_set_argument_rules() -> None:
    c = case({"actions": [CANCEL]}, "set", field="actions")
    assert not SetCheck().check(c, {"actions": [{"name": "cancel_reservation", "arguments": {}}]}).passed
    exact_args = case({"actions": [CANCEL]}, "set", field="actions", args="exact")
    assert not SetCheck().check(exact_args, {"actions": [{"name": "cancel_reservation",
                                                          "arguments": {"reservation_id": "ABC123", "x": 1}}]}).passed
    extra_ok = case({"actions": []}, "set", field="actions", allow_extra=True)
    assert SetCheck().check(extra_ok, {"actions": [CANCEL]}).passed
    refuse = case({"actions": []}, "set", field="actions")
    assert SetCheck().check(refuse, {"actions": []}).passed
    assert (
        SetCheck().check(refuse, {"actions": [CANCEL]}).reason
        == 'unexpected cancel_reservation(reservation_id="ABC123")'
    )
    assert SetCheck().check(refuse, {"answer": []}).reason == "answer has no `actions`"
    assert SetCheck().check(refuse, {"actions": "none"}).reason == "expected a list, got str"
    assert SetCheck().check(refuse, []).passed  # the bare list is accepted too


def test_set_finds_the_matching_that_order_would_miss() -> None:
    # A greedy left-to-right pass pairs the loose item with the first output and then fails.
    loose, tight = {"name": "a"}, {"name": "a", "arguments": {"x": 1}}
    c = case([loose, tight], "set")
    assert SetCheck().check(c, [{"name": "a", "arguments": {"x": 1}}, {"name": "a", "arguments": {"x": 2}}]).passed


def test_same_normalises_numbers_and_strings() -> None:
    assert same({"amount": 348}, {"amount": "348.0"})
    assert same(" Economy ", "economy")
    assert not same("Economy", "economy", ignore_case=False)
    assert not same(True, 1)
    assert not same(None, "none")


def test_exact_and_contains() -> None:
    assert ExactCheck().check(case("4", "exact"), 4).passed
    assert ExactCheck().check(case("4", "exact"), 5).reason == 'expected "4", got 5'
    assert ExactCheck().check(case({"n": 4}, "exact", field="n"), {"n": 4, "why": "x"}).passed
    c = case(["two free bags", "silver"], "contains")
    assert ContainsCheck().check(c, "As a Silver member you get two  free bags.").passed
    assert ContainsCheck().check(c, "You get two free bags.").reason == "does not contain 'silver'"
    assert ContainsCheck().check(c, None).reason == "no answer"


def test_rubric_goes_to_the_judge_model(sim_workspace) -> None:
    from frames_cli.formats.case_files import load_cases

    cases = {c.id: c for c in load_cases(sorted(sim_workspace.workspace.cases_dir.glob("*.yaml")))}
    rubric_case = cases["refund-1"]
    with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False) as judge:
        check = RubricCheck(judge)
        good, bad = check.check(rubric_case, "no"), check.check(rubric_case, "yes, $50")
        assert judge.ledger.to_dict()["roles"]["judge"]["calls"] == 2
    assert good.passed and good.usage.prompt_tokens > 0
    assert not bad.passed and bad.reason.startswith("the answer differs from the expected")
