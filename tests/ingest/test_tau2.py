"""The tau2 converter on the real airline tasks (spot-checked by hand) and on a retail-shaped fixture."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.errors import InputError
from frames_cli.formats.case import Case, load_cases
from frames_cli.ingest.tau2 import Tau2Converter, customer_text

ROOT = Path(__file__).resolve().parents[2]
AIRLINE = ROOT / "tests" / "fixtures" / "tau2-airline"
RETAIL = ROOT / "tests" / "fixtures" / "tau2-retail"


@pytest.fixture(scope="module")
def airline() -> dict[str, Case]:
    return {c.id.removeprefix("tau2-airline-"): c for c in Tau2Converter(AIRLINE / "tasks.json", AIRLINE).convert()}


def actions(case: Case) -> list[tuple[str, dict]]:
    return [(a["name"], a["arguments"]) for a in case.task.expected["actions"]]


def test_refused_cancellation_expects_no_write(airline: dict[str, Case]) -> None:
    # Task 0: basic-economy booking more than 24 h old, no insurance: the agent must refuse.
    case = airline["0"]
    assert case.category == "refuse-cancel"
    assert actions(case) == []
    assert case.task.check.kind == "set" and case.task.check.options == {"field": "actions"}
    assert case.diagnosis.evidence[0] == "Agent should refuse to proceed with the cancellation."
    text = case.task.input["text"]
    assert text.startswith("I want to cancel reservation EHGLP3.")
    assert "My user id is emma_kim_9957." in text and "You " not in text
    fields = case.task.input["fields"]
    assert fields["customer"]["user_id"] == "emma_kim_9957"
    assert [r["reservation_id"] for r in fields["reservations"]] == ["EHGLP3", "66EEUA", "MDCLVA", "H1QGCY"]


def test_upgrade_then_cancel_is_a_cabin_change(airline: dict[str, Case]) -> None:
    # Task 7: upgrade basic-economy XEHM4B to business (same flights), then cancel both reservations.
    case = airline["7"]
    assert case.category == "change-cabin"
    assert actions(case) == [
        (
            "update_reservation_flights",
            {
                "reservation_id": "XEHM4B",
                "cabin": "business",
                "flights": [{"flight_number": "HAT005", "date": "2024-05-20"}, {"flight_number": "HAT178", "date": "2024-05-30"}],
                "payment_id": "credit_card_2408938",
            },
        ),
        ("cancel_reservation", {"reservation_id": "XEHM4B"}),
        ("cancel_reservation", {"reservation_id": "59XX6W"}),
    ]
    assert "I'd like to upgrade to business first" in case.task.input["text"]


def test_flight_change_shows_options_with_prices(airline: dict[str, Case]) -> None:
    # Task 15: move M05KNL to HAT110 + HAT172 on 2024-05-24 in economy, paid by gift card.
    case = airline["15"]
    assert case.category == "modify-flights"
    ((name, args),) = actions(case)
    assert name == "update_reservation_flights"
    assert args["reservation_id"] == "M05KNL" and args["cabin"] == "economy" and args["payment_id"] == "gift_card_8887175"
    options = {(o["flight_number"], o["date"]): o for o in case.task.input["fields"]["flight_options"]}
    assert options[("HAT110", "2024-05-24")]["prices"]["economy"] == 105
    assert len(options) > 2  # alternatives, not only the answer


def test_transfer_keeps_no_free_text_and_counts_as_refusal(airline: dict[str, Case]) -> None:
    # Task 13: origin change is not allowed; tau2 compares no argument of the transfer.
    assert airline["13"].category == "refuse"
    assert actions(airline["13"]) == [("transfer_to_human_agents", {})]


def test_more_spot_checks(airline: dict[str, Case]) -> None:
    assert airline["19"].category == "cancel" and actions(airline["19"]) == [("cancel_reservation", {"reservation_id": "Z7GOZK"})]
    assert airline["40"].category == "passengers"
    assert actions(airline["40"])[0][1]["passengers"][1] == {"first_name": "Mei", "last_name": "Garcia", "dob": "1989-12-13"}
    assert airline["8"].category == "book"
    assert actions(airline["8"])[0][1]["payment_methods"] == [{"payment_id": "certificate_8045380", "amount": 348}]
    assert airline["5"].category == "compensation" and actions(airline["5"]) == []
    status = {s["flight_number"]: s["status"] for s in airline["5"].task.input["fields"]["flight_status"]}
    assert status["HAT045"] == "delayed"
    assert airline["12"].category == "baggage"
    # No price or seat counts when the request is not about flights (task 26: cancel and refund).
    assert all("prices" not in s for s in airline["26"].task.input["fields"]["flight_status"])


def test_categories_each_hold_several_cases(airline: dict[str, Case]) -> None:
    counts = Counter(c.category for c in airline.values())
    assert set(counts) == {"refuse-cancel", "refuse", "book", "modify-flights", "compensation", "change-cabin", "passengers", "cancel", "baggage"}
    assert min(counts.values()) >= 2
    assert sum(1 for c in airline.values() if not c.task.expected["actions"]) == 23  # as the data README counts


def test_assertions_and_purpose_never_reach_the_input(airline: dict[str, Case]) -> None:
    for case in airline.values():
        shown = json.dumps(case.agent_view().to_dict())
        for sentence in case.diagnosis.evidence:
            assert sentence not in shown, case.id


def test_bundled_cases_are_the_converter_output(airline: dict[str, Case]) -> None:
    bundled = load_cases([ROOT / "cases" / "tau2-airline.yaml"])
    fresh = list(airline.values())
    strip = lambda c: {**c.to_dict(), "created": ""}  # noqa: E731
    assert [strip(c) for c in bundled] == [strip(c) for c in fresh]


def test_retail_orders_instead_of_reservations() -> None:
    cases = {c.id: c for c in Tau2Converter(RETAIL / "tasks.json", RETAIL).convert()}
    exchange = cases["tau2-retail-0"]
    assert exchange.category == "exchange"
    assert exchange.task.input["fields"]["customer"]["user_id"] == "yusuf_rossi_9620"  # found by name + zip
    assert [o["order_id"] for o in exchange.task.input["fields"]["orders"]] == ["#W2378156", "#W4776164"]
    assert {p["product_id"] for p in exchange.task.input["fields"]["products"]} == {"6992792935", "2524789262"}
    assert cases["tau2-retail-1"].category == "cancel"
    assert cases["tau2-retail-1"].task.expected["actions"][0]["arguments"] == {"order_id": "#W4776164", "reason": "no longer needed"}
    assert cases["tau2-retail-2"].category == "return"
    assert cases["tau2-retail-2"].task.input["fields"]["customer"]["user_id"] == "mei_kovacs_8020"  # found by email
    assert cases["tau2-retail-3"].category == "refuse-cancel" and cases["tau2-retail-3"].task.expected == {"actions": []}
    assert "return_delivered_order_items(order_id, item_ids, payment_method_id)" in exchange.task.answer_format


def test_customer_text_drops_simulator_steering() -> None:
    text = customer_text(
        {
            "reason_for_call": "You want to cancel your flight.",
            "known_info": "Your user id is a_b_1.",
            "task_instructions": "Be persistent. If the agent says it is not possible, mention that you are a gold member. "
            "You are calm.",
        }
    )
    assert text == "I want to cancel my flight.\n\nMy user id is a_b_1.\n\nIf it is not possible, I am a gold member."


def test_unknown_customer_names_the_task_line(tmp_path: Path) -> None:
    tasks = json.loads((RETAIL / "tasks.json").read_text())
    tasks[1]["user_scenario"]["instructions"]["known_info"] = "You are Nobody Known."
    tasks[1]["evaluation_criteria"]["actions"] = []
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks, indent=2))
    line = json.dumps(tasks, indent=2).splitlines().index('  {', 2) + 1
    with pytest.raises(InputError, match=rf"^{path}:{line}: task 1: cannot find the customer"):
        Tau2Converter(path, RETAIL).convert()


def test_broken_tasks_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text('[\n  {"id": "0"},\n  {"id": 1,,}\n]\n')
    with pytest.raises(InputError, match=rf"^{path}:3: invalid JSON"):
        Tau2Converter(path, RETAIL).convert()


def ingest_retail(tmp_path: Path, out: Path, *extra: str):
    """`frames ingest tau2` of the retail fixture into `out`, in a workspace of its own under
    `tmp_path` (not the current folder, which is a workspace only when the tests run from the checkout)."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "frames.yaml").write_text("version: 1\n")
    args = ["ingest", "tau2", "--tasks", str(RETAIL / "tasks.json"), "--db", str(RETAIL), "--out", str(out), "--repo", str(ws), *extra]
    return CliRunner().invoke(app, args)


def test_cli_writes_cases_and_rerun_is_byte_identical(tmp_path: Path) -> None:
    out = tmp_path / "cases" / "retail.jsonl"
    first = ingest_retail(tmp_path, out, "--json")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["categories"] == {"cancel": 1, "exchange": 1, "refuse-cancel": 1, "return": 1}
    before = out.read_bytes()
    (line,) = [ln for ln in before.decode().splitlines() if '"tau2-retail-1"' in ln]
    out.write_text(before.decode().replace(line, line.replace(json.loads(line)["created"], "2020-01-01")))
    assert ingest_retail(tmp_path, out, "--json").exit_code == 0
    assert '"created": "2020-01-01"' in out.read_text()  # the old stamp is kept


# UTC+14 and UTC-12: at any hour of the day, one of the two is on another date than UTC.
@pytest.mark.parametrize("zone", ["Etc/GMT-14", "Etc/GMT+12"])
def test_cli_stamps_cases_with_the_utc_date_as_the_other_converters_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zone: str) -> None:
    import time
    from datetime import datetime, timezone

    out = tmp_path / "retail.jsonl"
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        before = datetime.now(timezone.utc).date().isoformat()
        done = ingest_retail(tmp_path, out)
        after = datetime.now(timezone.utc).date().isoformat()
    finally:
        monkeypatch.undo()
        time.tzset()
    assert done.exit_code == 0, done.output
    stamps = {json.loads(line)["created"] for line in out.read_text().splitlines()}
    assert len(stamps) == 1 and stamps <= {before, after}


def test_cli_bad_domain_exits_2(tmp_path: Path) -> None:
    result = ingest_retail(tmp_path, tmp_path / "x.yaml", "--domain", "rail")
    assert result.exit_code == 2
    assert "unknown tau2 domain 'rail' (valid: airline, retail)" in result.stderr
