"""What differs between tau2 domains (Tau2Domain): the customer's records,
the write tools and their categories, the DB context; AIRLINE and RETAIL."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from frames_cli.ingest.tau2.data import Tau2Db
from frames_cli.ingest.tau2.flights import RESERVATION_ID, airline_context

_ANSWER_FORMAT = (
    'A JSON object {{"actions": [{{"name": TOOL, "arguments": {{...}}}}, ...], "reply": TEXT}}: "actions" lists every '
    "write action that the policy allows for this request, in any order "
    '([] when the right response is to refuse or only to inform); "reply" is what you tell the customer '
    "(the figures and facts they asked for). "
    "This one message stands for the whole conversation: take the customer's request as their explicit "
    'confirmation ("yes") of the actions it asks for once you have stated their details, and list the write '
    "actions you would then take. Write tools and their arguments: {tools}."
)



@dataclass(frozen=True)
class Tau2Domain:
    """What differs between tau2 domains.

    Attributes:
        name: tau2's domain name (`user_scenario.instructions.domain`).
        records: the DB table of the customer's own records ("reservations", "orders").
        record_key: the tool argument and record field naming one record ("reservation_id").
        record_id: regex finding record ids in the customer's words (`normalise_id` spells them as the DB does).
        write_tools: write tool → (category, argument list shown in the answer format), in order of
            precedence: a task's category comes from its first-listed write tool.
        no_write_rules: (regex over the nl_assertions and purpose, category) for tasks whose right
            outcome writes nothing, first match wins; `refuse` when none matches.
        free_text_args: arguments never compared (free prose such as a transfer summary).
        context: extra input fields from the DB (flight status and prices, product variants).
        refine: an optional finer category for a write tool, from its actions and the DB.
    """

    name: str
    records: str
    record_key: str
    record_id: str
    write_tools: dict[str, tuple[str, str]]
    no_write_rules: tuple[tuple[str, str], ...]
    context: Callable[[Tau2Db, list[dict[str, Any]], list[dict[str, Any]], bool, str], dict[str, Any]]
    refine: Callable[[str, list[dict[str, Any]], Tau2Db], str | None] = lambda tool, actions, db: None
    free_text_args: frozenset[str] = frozenset({"summary"})
    normalise_id: Callable[[str], str] = lambda rid: rid

    def record_ids(self, words: str) -> list[str]:
        """The record ids the customer's words name, as the database spells them (retail: `#W...`)."""
        return [self.normalise_id(r) for r in re.findall(self.record_id, words)]

    def answer_format(self) -> str:
        """The cases' `answer_format`: a JSON object of write actions, naming this domain's write
        tools with their arguments."""
        tools = "; ".join(f"{name}({args})" for name, (_, args) in self.write_tools.items())
        return _ANSWER_FORMAT.format(tools=tools)


def _airline_refine(tool: str, actions: list[dict[str, Any]], db: Tau2Db) -> str | None:
    """update_reservation_flights keeping every flight is a cabin change; otherwise a flight change."""
    if tool != "update_reservation_flights":
        return None
    for action in actions:
        args = action.get("arguments") or {}
        current = (db.row("reservations", args.get("reservation_id")) or {}).get("flights", [])
        before = sorted((f["flight_number"], f["date"]) for f in current)
        after = sorted((f.get("flight_number"), f.get("date")) for f in args.get("flights") or [])
        if before != after:
            return "modify-flights"
    return "change-cabin"


def _squash(text: str) -> str:
    """Lower-case words with hyphens and other marks dropped: "T-Shirt" and "tshirt" both read "tshirt"."""
    return " ".join(re.sub(r"[^a-z0-9 ]+", "", text.casefold().replace("-", "")).split())


def named_products(products: dict[str, Any], words: str) -> list[str]:
    """Ids of the catalog's products whose name the customer's words use ("the cheapest t-shirt",
    "desk lamps"), in catalog order."""
    said = f" {_squash(words)} "
    return [
        pid for pid, p in products.items() if isinstance(p, dict) and _squash(str(p.get("name", "")))
        and re.search(rf" {re.escape(_squash(str(p['name'])))}(?:e?s)? ", said)
    ]


def _retail_context(
    db: Tau2Db, records: list[dict[str, Any]], actions: list[dict[str, Any]], about_items: bool, words: str
) -> dict[str, Any]:
    """The catalog entries (variants, availability, prices) of the products the customer names, and,
    when items are in play, of the customer's order items and the products the reference looks up.

    A product the customer asks about but never ordered ("the price of the cheapest available
    t-shirt") is named in no order: without its entry the case could not be passed from its input.
    """
    products = db.table("products")
    wanted = named_products(products, words)
    if about_items:
        wanted += [item.get("product_id") for r in records for item in r.get("items", [])]
        wanted += [
            a["arguments"]["product_id"] for a in actions
            if a["name"] == "get_product_details" and "product_id" in (a.get("arguments") or {})
        ]
    return {"products": [products[p] for p in dict.fromkeys(wanted) if p in products]} if wanted else {}


AIRLINE = Tau2Domain(
    name="airline",
    records="reservations",
    record_key="reservation_id",
    record_id=RESERVATION_ID,
    write_tools={
        "transfer_to_human_agents": ("transfer", "summary"),
        "send_certificate": ("compensation", "user_id, amount"),
        "book_reservation": (
            "book",
            "user_id, origin, destination, flight_type, cabin, flights [{flight_number, date}], "
            "passengers [{first_name, last_name, dob}], payment_methods [{payment_id, amount}], "
            "total_baggages, nonfree_baggages, insurance",
        ),
        "update_reservation_passengers": ("passengers", "reservation_id, passengers [{first_name, last_name, dob}]"),
        "update_reservation_flights": (
            "modify-flights", "reservation_id, cabin, flights [{flight_number, date}], payment_id",
        ),
        "update_reservation_baggages": ("baggage", "reservation_id, total_baggages, nonfree_baggages, payment_id"),
        "cancel_reservation": ("cancel", "reservation_id"),
    },
    no_write_rules=(
        (r"compensat|certificate|voucher", "compensation"),
        (r"\bbag|suitcase", "baggage"),
        (r"insurance", "refuse"),
        (r"cancel", "refuse-cancel"),
    ),
    context=airline_context,
    refine=_airline_refine,
)

RETAIL = Tau2Domain(
    name="retail",
    records="orders",
    record_key="order_id",
    record_id=r"#?\bW\d{7}\b",
    normalise_id=lambda rid: rid if rid.startswith("#") else f"#{rid}",
    write_tools={
        "transfer_to_human_agents": ("transfer", "summary"),
        "exchange_delivered_order_items": ("exchange", "order_id, item_ids, new_item_ids, payment_method_id"),
        "return_delivered_order_items": ("return", "order_id, item_ids, payment_method_id"),
        "modify_pending_order_items": ("modify-items", "order_id, item_ids, new_item_ids, payment_method_id"),
        "cancel_pending_order": ("cancel", "order_id, reason"),
        "modify_pending_order_address": ("address", "order_id, address1, address2, city, state, country, zip"),
        "modify_user_address": ("address", "user_id, address1, address2, city, state, country, zip"),
        "modify_pending_order_payment": ("payment", "order_id, payment_method_id"),
    },
    no_write_rules=((r"cancel", "refuse-cancel"), (r"return|exchange|refund", "refuse-return")),
    context=_retail_context,
)

DOMAINS: dict[str, Tau2Domain] = {d.name: d for d in (AIRLINE, RETAIL)}
