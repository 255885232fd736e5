"""Grading no stricter than the source: every check kind reads an amount by value.

Invariants (issue 27, item 3):
1. "5,244", "$5,244.00" and "5244" each satisfy a required "5244", in every check kind
   (exact, contains, set with `mentions`, rubric through the simulated judge).
2. A number that differs still fails: "52,44" (a decimal comma, not a thousands separator),
   "15244" and "5244.5" never satisfy "5244".
3. `mentions` reads the reply as τ²'s communicate check does: commas between words are ignored.
"""

from __future__ import annotations

import json

import pytest

from frames_cli.evaluation.checks import ContainsCheck, ExactCheck, SetCheck
from frames_cli.evaluation.normalise import amount, canonical, holds
from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task
from frames_cli.llm.client.client import ChatRequest, ModelClient
from frames_cli.llm.messages.prompts import render
from frames_cli.llm.messages.schemas import RUBRIC_VERDICT

SAME = ["5,244", "$5,244.00", "5244", "5244.0", "$ 5244"]
DIFFERENT = ["52,44", "15244", "5244.5", "524", "52445", "5,2440"]


def case(expected: object, kind: str, **options: object) -> Case:
    return Case("c1", "cat", Source("manual"), "",
                Task({"text": "q", "fields": {}}, expected, Check(kind, dict(options))), Diagnosis())


@pytest.mark.parametrize("written", SAME)
def test_exact_reads_an_amount_by_value(written: str) -> None:
    assert ExactCheck().check(case("5244", "exact"), written).passed
    assert ExactCheck().check(case(5244, "exact"), written).passed


@pytest.mark.parametrize("written", DIFFERENT)
def test_exact_fails_a_different_number(written: str) -> None:
    assert not ExactCheck().check(case("5244", "exact"), written).passed


@pytest.mark.parametrize("written", SAME)
def test_contains_reads_an_amount_by_value(written: str) -> None:
    verdict = ContainsCheck().check(case("5244", "contains"),
                                    f"The fare difference is {written}, charged to your card.")
    assert verdict.passed, verdict.reason


@pytest.mark.parametrize("written", DIFFERENT)
def test_contains_fails_a_different_number(written: str) -> None:
    verdict = ContainsCheck().check(case("5244", "contains"), f"The fare difference is {written}.")
    assert not verdict.passed and verdict.reason == "does not contain '5244'"


def _mentions(reply: str) -> bool:
    c = case({"actions": [], "reply": ["5244"]}, "set", field="actions", mentions="reply")
    return SetCheck().check(c, {"actions": [], "reply": reply}).passed


@pytest.mark.parametrize("written", SAME)
def test_mentions_reads_an_amount_by_value(written: str) -> None:
    assert _mentions(f"You will pay {written} in total.")


@pytest.mark.parametrize("written", DIFFERENT)
def test_mentions_fails_a_different_number(written: str) -> None:
    assert not _mentions(f"You will pay {written} in total.")


def test_mentions_ignores_commas_between_words_as_tau2_does() -> None:
    c = case({"actions": [], "reply": ["Boston MA"]}, "set", field="actions", mentions="reply")
    assert SetCheck().check(c, {"actions": [], "reply": "It ships to Boston, MA."}).passed
    assert not SetCheck().check(c, {"actions": [], "reply": "It ships to Austin, TX."}).passed


def _judge(sim_workspace, expected: str, answer: str) -> bool:
    from frames_cli.sim.world import SimWorld

    world = SimWorld.from_cases([Case("r1", "refund", Source("manual"), "2026-12-03",
                                      Task({"text": "fare"}, expected, Check("rubric")))])
    prompt = render("judge", case_id="r1", request="fare", rubric=expected, answer=json.dumps(answer))
    with ModelClient(sim_workspace.workspace, sim_workspace.config, use_cache=False, sim_world=world) as client:
        return client.chat(ChatRequest("judge", [{"role": "user", "content": prompt}], RUBRIC_VERDICT)).data["pass"]


def test_rubric_reads_an_amount_by_value(sim_workspace) -> None:
    """The judge prompt tells a model that amounts are equal however written; the simulated judge does so."""
    assert "5,244" in render("judge", case_id="x", request="", rubric="", answer="")
    for written in SAME:
        assert _judge(sim_workspace, "5244", written), written
    for written in ("52,44", "15244"):
        assert not _judge(sim_workspace, "5244", written), written


def test_canonical_forms() -> None:
    assert canonical("Pay $5,244.00 or €1,000.50 by 2024-05-15") == "pay 5244 or 1000.5 by 2024-05-15"
    assert canonical("zip 02134, code 007") == "zip 02134, code 007"  # codes with a leading zero kept as written
    assert amount("$5,244.00") == 5244.0 and amount("52,44") is None and amount("5244 USD") is None
    assert holds("refund of 46.660 dollars", "$46.66") and not holds("refund of 146.66", "46.66")
