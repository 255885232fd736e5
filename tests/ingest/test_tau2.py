"""The tau2 converter on the real airline tasks (spot-checked by hand) and on a retail-shaped fixture."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app
from frames_cli.errors import InputError
from frames_cli.formats.case import Case
from frames_cli.formats.case_files import load_cases
from frames_cli.ingest.tau2.converter import Tau2Converter
from frames_cli.ingest.tau2.customer import CUSTOMER_HEADER, customer_text

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
    assert text.startswith(CUSTOMER_HEADER + "\n\nYou want to cancel reservation EHGLP3.")  # as written, marked
    assert "Your user id is emma_kim_9957." in text
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
                "flights": [{"flight_number": "HAT005", "date": "2024-05-20"},
                            {"flight_number": "HAT178", "date": "2024-05-30"}],
                "payment_id": "credit_card_2408938",
            },
        ),
        ("cancel_reservation", {"reservation_id": "XEHM4B"}),
        ("cancel_reservation", {"reservation_id": "59XX6W"}),
    ]
    assert "ask to upgrade to business first and then cancel" in case.task.input["text"]


def test_flight_change_shows_options_with_prices(airline: dict[str, Case]) -> None:
    # Task 15: move M05KNL to HAT110 + HAT172 on 2024-05-24 in economy, paid by gift card.
    case = airline["15"]
    assert case.category == "modify-flights"
    ((name, args),) = actions(case)
    assert name == "update_reservation_flights"
    assert (
        args["reservation_id"] == "M05KNL" and args["cabin"] == "economy" and args["payment_id"] == "gift_card_8887175"
    )
    options = {(o["flight_number"], o["date"]): o for o in case.task.input["fields"]["flight_options"]}
    assert options[("HAT110", "2024-05-24")]["prices"]["economy"] == 105
    assert len(options) > 2  # alternatives, not only the answer


def test_transfer_keeps_no_free_text_and_has_its_own_category(airline: dict[str, Case]) -> None:
    # Task 13: origin change is not allowed; tau2 compares no argument of the transfer.
    assert airline["13"].category == "transfer"
    assert actions(airline["13"]) == [("transfer_to_human_agents", {})]


def test_more_spot_checks(airline: dict[str, Case]) -> None:
    assert airline["19"].category == "cancel" and actions(airline["19"]) == [
        ("cancel_reservation", {"reservation_id": "Z7GOZK"})
    ]
    assert airline["40"].category == "passengers"
    assert actions(airline["40"])[0][1]["passengers"][1] == {"first_name": "Mei", "last_name": "Garcia",
                                                             "dob": "1989-12-13"}
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
    assert set(counts) == {"refuse-cancel", "refuse", "book", "modify-flights", "compensation", "change-cabin",
                           "passengers", "cancel", "baggage",
                           "transfer"}
    assert min(c for k, c in counts.items() if k != "transfer") >= 2  # airline has one transfer task
    assert sum(1 for c in airline.values() if not c.task.expected["actions"]) == 23  # as the data README counts


def test_assertions_and_purpose_never_reach_the_input(airline: dict[str, Case]) -> None:
    for case in airline.values():
        shown = json.dumps(case.agent_view().to_dict())
        for sentence in case.diagnosis.evidence:
            assert sentence not in shown, case.id


def test_bundled_cases_are_the_converter_output_on_tau2s_own_split(airline: dict[str, Case]) -> None:
    """cases/ holds τ²-bench's 30 train tasks, holdout/ its 20 test tasks (split_tasks.json), converted."""
    split = json.loads((AIRLINE / "split_tasks.json").read_text())
    strip = lambda c: {**c.to_dict(), "created": ""}  # noqa: E731
    for path, part in ((ROOT / "cases" / "tau2-airline.yaml", "train"),
                       (ROOT / "holdout" / "tau2-airline-test.yaml", "test")):
        bundled = load_cases([path])
        assert [strip(c) for c in bundled] == [strip(airline[t]) for t in sorted(split[part], key=int)], path
    assert sorted(split["train"] + split["test"], key=int) == sorted(airline, key=int)


def test_retail_orders_instead_of_reservations() -> None:
    cases = {c.id: c for c in Tau2Converter(RETAIL / "tasks.json", RETAIL).convert()}
    exchange = cases["tau2-retail-0"]
    assert exchange.category == "exchange"
    assert exchange.task.input["fields"]["customer"]["user_id"] == "yusuf_rossi_9620"  # found by name + zip
    assert [o["order_id"] for o in exchange.task.input["fields"]["orders"]] == ["#W2378156", "#W4776164"]
    assert {p["product_id"] for p in exchange.task.input["fields"]["products"]} == {"6992792935", "2524789262"}
    assert cases["tau2-retail-1"].category == "cancel"
    assert cases["tau2-retail-1"].task.expected["actions"][0]["arguments"] == {
        "order_id": "#W4776164",
        "reason": "no longer needed",
    }
    assert cases["tau2-retail-2"].category == "return"
    assert cases["tau2-retail-2"].task.input["fields"]["customer"]["user_id"] == "mei_kovacs_8020"  # found by email
    assert cases["tau2-retail-3"].category == "refuse-cancel" and cases["tau2-retail-3"].task.expected == {
        "actions": []
    }
    assert "return_delivered_order_items(order_id, item_ids, payment_method_id)" in exchange.task.answer_format


def test_customer_text_is_the_brief_as_written_without_steering() -> None:
    text = customer_text(
        {
            "reason_for_call": "You want to cancel your flight.",
            "known_info": "Your user id is a_b_1.",
            "task_instructions": "Be persistent. If the agent says it is not possible, mention that you are a gold "
                                 "member. "
            "You are calm.",
        }
    )
    assert text == (f"{CUSTOMER_HEADER}\n\nYou want to cancel your flight.\n\nYour user id is a_b_1.\n\n"
                    "If the agent says it is not possible, mention that you are a gold member.")


def test_what_the_customer_must_not_share_never_reaches_the_agent() -> None:
    text = customer_text({
        "reason_for_call": "You want to exchange your garden hose. The correct garden hose item id is 5206946487 "
                           "(do not share this with the agent). You want to return all items "
                           "(Everything except a keyboard and a mouse, but do not reveal it to the agent).",
    })
    assert "5206946487" not in text and "keyboard" not in text and "reveal" not in text
    assert "You want to exchange your garden hose." in text and "You want to return all items." in text


def _retail_tasks(tmp_path: Path, change) -> Path:
    tasks = json.loads((RETAIL / "tasks.json").read_text())
    change(tasks)
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks, indent=2))
    return path


def test_unknown_customer_skips_that_task_with_its_line(tmp_path: Path) -> None:
    def unknown(tasks):
        tasks[1]["user_scenario"]["instructions"]["known_info"] = "You are Nobody Known."
        tasks[1]["evaluation_criteria"]["actions"] = []
    path = _retail_tasks(tmp_path, unknown)
    line = path.read_text().splitlines().index('  {', 2) + 1
    converter = Tau2Converter(path, RETAIL)
    assert [c.id for c in converter.convert()] == ["tau2-retail-0", "tau2-retail-2", "tau2-retail-3"]
    [problem] = converter.problems
    assert (
        str(problem)
        == f"{path}:{line}: error: task 1: cannot find the customer in the database {RETAIL / 'db.json'}; task skipped"
    )
    assert [r.fate for r in converter.account.rows] == ["case", "skipped", "case", "case"]


def test_cli_unknown_customer_converts_the_rest_and_exits_0_strict_exits_2(tmp_path: Path) -> None:
    def unknown(tasks):
        tasks[1]["user_scenario"]["instructions"]["known_info"] = "You are Nobody Known."
        tasks[1]["evaluation_criteria"]["actions"] = []
    path = _retail_tasks(tmp_path, unknown)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "frames.yaml").write_text("version: 1\n")
    args = ["ingest", "tau2", "--tasks", str(path), "--db", str(RETAIL), "--repo", str(ws)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "tasks.json:" in result.stderr and ": error: task 1: cannot find the customer" in result.stderr
    assert len(load_cases([ws / "cases" / "tau2-retail.yaml"])) == 3
    assert "4 row(s): 3 case, 0 passing case, 0 prior, 0 duplicate, 1 skipped" in result.stdout
    (ws / "cases" / "tau2-retail.yaml").unlink()
    strict = CliRunner().invoke(app, [*args, "--strict"])
    assert strict.exit_code == 2 and not (ws / "cases" / "tau2-retail.yaml").exists()


def test_exclude_task(tmp_path: Path) -> None:
    ids = [c.id for c in Tau2Converter(RETAIL / "tasks.json", RETAIL, exclude=["1", "3"]).convert()]
    assert ids == ["tau2-retail-0", "tau2-retail-2"]
    with pytest.raises(InputError, match=r"no task with id '99' \(--exclude-task\)"):
        Tau2Converter(RETAIL / "tasks.json", RETAIL, exclude=["99"]).convert()


def test_customer_named_by_a_bare_user_id_and_an_order_without_hash(tmp_path: Path) -> None:
    def rename(tasks):
        ins = tasks[1]["user_scenario"]["instructions"]
        ins["known_info"] = "You are yusuf_rossi_9620."
        ins["reason_for_call"] = "You want to cancel order W4776164 because you no longer need it."
        tasks[1]["evaluation_criteria"]["actions"] = []
    cases = {c.id: c for c in Tau2Converter(_retail_tasks(tmp_path, rename), RETAIL).convert()}
    fields = cases["tau2-retail-1"].task.input["fields"]
    assert fields["customer"]["user_id"] == "yusuf_rossi_9620"
    assert "#W4776164" in [o["order_id"] for o in fields["orders"]]


def test_communicate_info_is_expected_in_the_reply_and_the_task_is_inform(tmp_path: Path) -> None:
    def inform(tasks):
        tasks[3]["evaluation_criteria"]["communicate_info"] = ["$54.04"]
        tasks[3]["evaluation_criteria"]["nl_assertions"] = ["Agent tells the customer the order total."]
        tasks[3]["description"]["purpose"] = None
    case = {c.id: c for c in Tau2Converter(_retail_tasks(tmp_path, inform), RETAIL).convert()}["tau2-retail-3"]
    assert case.category == "inform"
    assert case.task.expected == {"actions": [], "reply": ["$54.04"]}
    assert case.task.check.options == {"field": "actions", "mentions": "reply"}
    from frames_cli.evaluation.checks import SetCheck
    assert SetCheck().check(case, {"actions": [], "reply": "You would get $54.04 back."}).passed
    assert not SetCheck().check(case, {"actions": [], "reply": "You would get money back."}).passed


def test_the_answer_format_states_the_confirmation_convention(airline: dict[str, Case]) -> None:
    assert 'explicit confirmation ("yes")' in airline["0"].task.answer_format


def test_a_date_change_lists_flight_options_on_the_requested_dates(airline: dict[str, Case]) -> None:
    # Task 10: push back IAH → SEA from May 23 to May 24; tau2 lists no action at all.
    options = airline["10"].task.input["fields"].get("flight_options", [])
    assert any(o["origin"] == "IAH" and o["date"] == "2024-05-24" for o in options)


def test_no_flight_options_when_the_flights_stay_as_they_are(airline: dict[str, Case]) -> None:
    # 40: a passenger name; 18: "downgrade ... without changing the flights"; 5: "do NOT want to ... modify your
    # flight".
    for task in ("40", "18", "5"):
        assert "flight_options" not in airline[task].task.input["fields"], task
    # The cabin change still shows what the customer's own flights cost in each cabin.
    assert all("prices" in s for s in airline["18"].task.input["fields"]["flight_status"])


def test_options_are_on_the_day_the_customer_moves_to(airline: dict[str, Case]) -> None:
    # Task 34: HXDUBJ's outbound (IAH → SFO via JFK, May 18) "on the next day" and the return from SFO (May 22) "by
    # one day".
    days = {(o["origin"], o["destination"], o["date"]) for o in airline["34"].task.input["fields"]["flight_options"]}
    assert ("IAH", "SFO", "2024-05-19") in days and ("SFO", "IAH", "2024-05-23") in days
    assert not {d for _, _, d in days} & {"2024-05-18", "2024-05-22"}


def test_a_booking_lists_the_route_and_date_the_customer_names(airline: dict[str, Case]) -> None:
    # Task 8: "book a one-way flight from ORD to PHL on May 26": the reference flight and its alternatives.
    direct = {o["flight_number"] for o in airline["8"].task.input["fields"]["flight_options"]
              if (o["origin"], o["destination"], o["date"]) == ("ORD", "PHL", "2024-05-26")}
    assert "HAT271" in direct and len(direct) > 1


def test_every_option_can_be_booked(airline: dict[str, Case]) -> None:
    from frames_cli.ingest.tau2.flights import TODAY

    options = [o for c in airline.values() for o in c.task.input["fields"].get("flight_options", [])]
    assert options and all(o["status"] == "available" and o["date"] > TODAY and "prices" in o for o in options)


def test_a_negated_change_asks_for_no_new_flight() -> None:
    from frames_cli.ingest.tau2.flights import named_routes, requested_routes

    records = [{"reservation_id": "ABC123", "origin": "IAH", "destination": "SEA",
                "flights": [{"flight_number": "HAT001", "origin": "IAH", "destination": "SEA", "date": "2024-05-23"}]}]
    assert requested_routes(records, "You do NOT want to cancel or modify your flight.") == []
    assert requested_routes(records, "You want to push back your flight from IAH to SEA to May 24.") == [
        ("IAH", "SEA", "2024-05-24", False)]
    assert named_routes("You want to book a flight from Houston to Seattle on May 24.") == [
        ("IAH", "SEA", "2024-05-24", True)
    ]
    assert named_routes("You want to book a flight from Houston to Seattle.") == []  # no date: nothing to look up


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
    args = ["ingest", "tau2", "--tasks", str(RETAIL / "tasks.json"), "--db", str(RETAIL), "--out", str(out), "--repo",
            str(ws), *extra]
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
def test_cli_stamps_cases_with_the_utc_date_as_the_other_converters_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       zone: str) -> None:
    import time
    from datetime import UTC, datetime

    out = tmp_path / "retail.jsonl"
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        before = datetime.now(UTC).date().isoformat()
        done = ingest_retail(tmp_path, out)
        after = datetime.now(UTC).date().isoformat()
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


def _ask_price_of_a_product_never_ordered(tasks) -> None:
    """τ² retail task 39's shape: the customer asks the price of a product variant none of their orders holds."""
    ins = tasks[3]["user_scenario"]["instructions"]
    ins["reason_for_call"] = "You want to know the price of the cheapest available pair of headphones right now."
    tasks[3]["evaluation_criteria"]["actions"] = []
    tasks[3]["evaluation_criteria"]["communicate_info"] = ["342.81"]
    tasks[3]["description"]["purpose"] = None


def test_a_product_the_customer_names_is_in_the_input_though_never_ordered(tmp_path: Path) -> None:
    converter = Tau2Converter(_retail_tasks(tmp_path, _ask_price_of_a_product_never_ordered), RETAIL)
    case = {c.id: c for c in converter.convert()}["tau2-retail-3"]
    orders = case.task.input["fields"]["orders"]
    assert "342.81" not in json.dumps(orders)  # her order holds another pair, at another price
    assert [p["name"] for p in case.task.input["fields"]["products"]] == ["Headphones"]
    assert not converter.problems and converter.account.rows[3].reason == ""
    from frames_cli.evaluation.checks import SetCheck
    assert SetCheck().check(case, {"actions": [], "reply": "The cheapest available pair is $342.81."}).passed


def test_the_account_says_when_a_case_cannot_be_passed_from_its_input(tmp_path: Path) -> None:
    def never_named(tasks) -> None:
        _ask_price_of_a_product_never_ordered(tasks)
        tasks[3]["user_scenario"]["instructions"]["reason_for_call"] = (
            "You want to know which card your last order was paid with."
        )
        tasks[3]["evaluation_criteria"]["communicate_info"] = ["amex"]
    converter = Tau2Converter(_retail_tasks(tmp_path, never_named), RETAIL)
    converter.convert()
    row = converter.account.rows[3]
    assert row.fate == "case" and row.reason.startswith(
        "cannot be passed from its input: the reply must mention 'amex'"
    )
    [warning] = converter.problems
    assert warning.severity == "warning" and "case tau2-retail-3 cannot be passed from its input" in warning.message
    assert any("cannot be passed from its input" in line for line in converter.account.lines())


def test_the_bundled_airline_tasks_can_all_be_passed_from_their_input() -> None:
    converter = Tau2Converter(AIRLINE / "tasks.json", AIRLINE)
    converter.convert()
    assert not converter.problems
