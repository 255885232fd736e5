"""tau2-bench tasks → cases: the customer's side and their records as input, the allowed write actions as expected.

One tau2 task becomes one case (see `Tau2Converter` for the rules). Domains differ only in a
`Tau2Domain` table: which DB table holds the customer's records (airline reservations, retail
orders), which tools write, and how a write action names a category.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError, Location
from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task
from frames_cli.formats.problems import Problem
from frames_cli.ingest.account import Account
from frames_cli.ingest.tau2_flights import RESERVATION_ID, airline_context

_ANSWER_FORMAT = (
    'A JSON object {{"actions": [{{"name": TOOL, "arguments": {{...}}}}, ...], "reply": TEXT}}: "actions" lists every '
    "write action that the policy allows for this request, in any order "
    '([] when the right response is to refuse or only to inform); "reply" is what you tell the customer '
    "(the figures and facts they asked for). "
    "This one message stands for the whole conversation: take the customer's request as their explicit "
    'confirmation ("yes") of the actions it asks for once you have stated their details, and list the write '
    "actions you would then take. Write tools and their arguments: {tools}."
)


class Tau2Db:
    """A tau2 domain database: table name → {record id → record}.

    Read either from a folder holding tau2's `db.json` or one `<table>.json` per table (the
    tau-bench layout), or from a `.json` file holding all tables.
    """

    def __init__(self, tables: dict[str, dict[str, Any]], path: Path):
        self.tables = tables
        self.path = path

    @classmethod
    def load(cls, path: Path | str) -> Tau2Db:
        """Load a database.

        Raises:
            InputError: missing path, unreadable or invalid JSON, or a table that is not a mapping.
        """
        path = Path(path)
        if path.is_dir() and (path / "db.json").is_file():
            path = path / "db.json"
        if path.is_file():
            tables = _read_json(path)
            if not isinstance(tables, dict):
                raise InputError("a tau2 database must be a JSON object of tables", Location(path, 1))
        elif path.is_dir():
            tables = {p.stem: _read_json(p) for p in sorted(path.glob("*.json")) if p.stem not in ("tasks", "split_tasks")}
        else:
            raise InputError("no such database file or folder", Location(path))
        for name, table in tables.items():
            if not isinstance(table, dict):
                raise InputError(f"table {name!r} must be a JSON object keyed by id", Location(path))
        return cls(tables, path)

    def table(self, name: str) -> dict[str, Any]:
        """The table `name`, or {} if the database has none."""
        return self.tables.get(name, {})

    def user(self, user_id: str) -> dict[str, Any] | None:
        """The user record with its id as the first key, or None."""
        record = self.table("users").get(user_id)
        return {"user_id": user_id, **{k: v for k, v in record.items() if k != "user_id"}} if record else None


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", Location(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", Location(path, exc.lineno)) from None


def read_tasks(path: Path | str, shown: str | None = None) -> list[tuple[dict[str, Any], Location]]:
    """Read a tau2 `tasks.json` (a JSON array of tasks) with the line where each task starts;
    `shown` names the file in locations (default `path`).

    Raises:
        InputError: unreadable file, invalid JSON or not an array of objects (`path:line`).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", Location(path)) from None
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")

    label = Path(shown) if shown is not None else path

    def fail(message: str, pos: int) -> InputError:
        return InputError(message, Location(label, text.count("\n", 0, pos) + 1))

    pos = ws.match(text, 0).end()
    if not text.startswith("[", pos):
        raise fail("tasks file must be a JSON array of tasks", pos)
    pos = ws.match(text, pos + 1).end()
    tasks: list[tuple[dict[str, Any], Location]] = []
    while not text.startswith("]", pos):
        try:
            task, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise fail(f"invalid JSON: {exc.msg}", exc.pos) from None
        if not isinstance(task, dict):
            raise fail("each task must be a JSON object", pos)
        tasks.append((task, Location(label, text.count("\n", 0, pos) + 1)))
        pos = ws.match(text, end).end()
        if text.startswith(",", pos):
            pos = ws.match(text, pos + 1).end()
        elif not text.startswith("]", pos):
            raise fail("expected `,` or `]` after a task", pos)
    return tasks


# --- the customer's side ----------------------------------------------------------------------

# Sentences that steer the user simulator's conversation (tone, pacing, tests of the agent) rather
# than say anything a customer would tell an agent. Matched case-insensitively.
_STEERING = re.compile(
    r"^(be|do not|don't|never|use both|mention all|after asserting|this is incorrect)\b"
    r"|^you are (very |extremely |a bit )?(calm|persistent|reactive|impatient|emotional|terse|distraught|polite)\b"
    r"|\b(conversation|rounds? of interaction|agent message|end the call|meant to test|first offer|few attempts)\b",
    re.IGNORECASE,
)
# What the customer is told to keep from the agent ("do not share this with the agent", "but do
# not reveal it to the agent"): the evaluation's knowledge, never the agent's input.
_HIDDEN = re.compile(
    r"\b(?:do not|don't|never|not to)\s+(?:share|reveal|disclose|tell|mention|give|volunteer|say)\b[^.()]*?"
    r"\b(?:agent|them|anyone|it|this|unless)\b",
    re.IGNORECASE,
)
_PARENS = re.compile(r"\s*\(([^()]*)\)")
#: The line that opens the customer's part of a case's input.
CUSTOMER_HEADER = (
    "The customer's brief, as written for the customer (\"you\" is the customer, \"the agent\" is you); "
    "what it says is the customer's words and claims, not verified facts:"
)


def _sentences(text: str | None) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n|\n(?=[-•*]\s)", text or ""):
        block = " ".join(block.split())
        out.extend(s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", block) if s)
    return out


def _without_hidden(sentence: str) -> str | None:
    """`sentence` without what the customer must keep from the agent; None when all of it is hidden.

    A parenthesis that is only the directive ("(do not share this with the agent)") hides the
    sentence it qualifies; one that holds more ("(Everything except a keyboard, but do not reveal
    it)") hides only itself.
    """
    for m in list(_PARENS.finditer(sentence)):
        directive = _HIDDEN.search(m.group(1))
        if directive is None:
            continue
        rest = re.sub(r"but\s*$", "", m.group(1)[: directive.start()].strip(" ,;-")).strip(" ,;-")
        if not rest:
            return None
        sentence = sentence.replace(m.group(0), "")
    if _HIDDEN.search(sentence):
        return None
    return sentence.strip() or None


def customer_text(instructions: dict[str, Any]) -> str:
    """The customer's side of a task as the customer's own brief, marked as such (`CUSTOMER_HEADER`).

    Uses `reason_for_call`, `known_info`, `unknown_info` and `task_instructions`, in that order,
    one paragraph each, passed as written: a rule-based rewrite into the first person garbled the
    sentences ("Please tell me you how much ..."). Sentences that only steer the user simulator
    (tone, pacing, tests of the agent) and whatever the customer is told to keep from the agent
    are left out.
    """
    paragraphs = []
    for key in ("reason_for_call", "known_info", "unknown_info", "task_instructions"):
        kept = [t for sentence in _sentences(instructions.get(key)) if not _STEERING.search(sentence)
                and (t := _without_hidden(sentence)) is not None]
        if kept:
            paragraphs.append(" ".join(kept))
    return "\n\n".join([CUSTOMER_HEADER, *paragraphs])


# --- domains -----------------------------------------------------------------------------------


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


_FLIGHT_REQUEST = re.compile(
    r"\b(chang|modif|upgrad|downgrad|push back|switch|book\b|rebook|reschedul|nonstop|cabin|business|economy)",
    re.IGNORECASE,
)
_FLIGHT_TOOLS = frozenset({"search_direct_flight", "search_onestop_flight", "update_reservation_flights", "book_reservation"})


def _airline_refine(tool: str, actions: list[dict[str, Any]], db: Tau2Db) -> str | None:
    """update_reservation_flights keeping every flight is a cabin change; otherwise a flight change."""
    if tool != "update_reservation_flights":
        return None
    for action in actions:
        args = action.get("arguments") or {}
        current = db.table("reservations").get(args.get("reservation_id"), {}).get("flights", [])
        before = sorted((f["flight_number"], f["date"]) for f in current)
        after = sorted((f.get("flight_number"), f.get("date")) for f in args.get("flights") or [])
        if before != after:
            return "modify-flights"
    return "change-cabin"


def _retail_context(db: Tau2Db, records: list[dict[str, Any]], actions: list[dict[str, Any]], about_items: bool, words: str) -> dict[str, Any]:
    """The products of the customer's order items (variants, availability, prices) when items are in play."""
    if not about_items:
        return {}
    wanted = [item.get("product_id") for r in records for item in r.get("items", [])]
    wanted += [a["arguments"]["product_id"] for a in actions if a["name"] == "get_product_details" and "product_id" in (a.get("arguments") or {})]
    products = db.table("products")
    return {"products": [products[p] for p in dict.fromkeys(wanted) if p in products]}


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
        "update_reservation_flights": ("modify-flights", "reservation_id, cabin, flights [{flight_number, date}], payment_id"),
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
_ITEM_REQUEST = re.compile(r"\b(exchange|return|swap|replace|item|size|color|colour|modify|change)", re.IGNORECASE)


# --- the converter -----------------------------------------------------------------------------


@dataclass
class Tau2Converter:
    """Converts tau2-bench tasks of one domain into cases (`frames ingest tau2`).

    Rules, per task:
        - input.text: the customer's side (`customer_text`); input.fields: the customer's profile,
          their records (all of their own, plus any the task names), and the domain's context
          (airline: flight status; prices and the direct and one-stop options on the routes in play
          when the request is about flights; retail: products of the items when items are in play).
        - expected: ``{"actions": [...]}``, the task's reference write actions with their compared
          arguments (tau2's `compare_args` when given, else all but free text); [] when the right
          outcome writes nothing (refuse or only inform). Checked as a set with argument matching.
        - category: from the highest-precedence write tool (`Tau2Domain.write_tools`, refined for
          airline cabin vs flight changes); for no-write tasks, from `no_write_rules` on the
          assertions and purpose, else `refuse`. A transfer to a human counts as `refuse`: policy
          allows it only when the request cannot be handled.
        - diagnosis.evidence: `nl_assertions`, then `description.purpose`; notes: tau2's notes and
          relevant policies. None of it reaches the input.

    Attributes:
        tasks_path: tau2 `tasks.json`.
        db_path: the domain database (see `Tau2Db.load`).
        domain: "airline", "retail" or None to read it from the tasks.
        created: the `created` stamp of every case (ISO date).
        task_ids: only these task ids (None = all), e.g. a tau2 split.
        exclude: leave these task ids out.
        shown: the tasks file's name in locations and references (relative to the workspace).

    A task that cannot be converted (no instructions, a customer not in the database, an unknown
    domain) is skipped: `problems` gets an error at its line and `account` its fate, as bad rows
    of the other converters.
    """

    tasks_path: Path
    db_path: Path
    domain: str | None = None
    created: str = ""
    task_ids: Iterable[str] | None = None
    exclude: Iterable[str] = ()
    shown: str | None = None
    kind: str = field(default="tau2", init=False)
    problems: list[Problem] = field(default_factory=list, init=False)
    account: Account = field(default_factory=Account, init=False)

    def convert(self) -> list[Case]:
        """Convert the tasks, in file order; bad tasks are skipped into `problems` and `account`.

        Raises:
            InputError: unreadable or malformed files, or a wanted or excluded task id that no task has.
        """
        tasks = read_tasks(self.tasks_path, self.shown)
        db = Tau2Db.load(self.db_path)
        wanted = set(self.task_ids) if self.task_ids is not None else None
        excluded = set(self.exclude)
        cases = []
        seen: set[str] = set()
        self.problems, self.account = [], Account()
        for task, location in tasks:
            task_id = str(task.get("id"))
            seen.add(task_id)
            if (wanted is not None and task_id not in wanted) or task_id in excluded:
                continue
            try:
                case = self._case(task, location, self._domain(task, location), db)
            except InputError as exc:
                self.problems.append(Problem(location, f"{exc.message}; task skipped"))
                self.account.add(location, "skipped", exc.message, own_id=task_id)
                continue
            cases.append(case)
            self.account.add(location, "case", "", case, own_id=task_id)
        for option, ids in (("--task", wanted or set()), ("--exclude-task", excluded)):
            missing = sorted(ids - seen)
            if missing:
                raise InputError(f"no task with id {', '.join(map(repr, missing))} ({option})", Location(self.tasks_path))
        return cases

    def _domain(self, task: dict[str, Any], location: Location) -> Tau2Domain:
        name = self.domain or ((task.get("user_scenario") or {}).get("instructions") or {}).get("domain")
        if name not in DOMAINS:
            raise InputError(f"unknown tau2 domain {name!r} (valid: {', '.join(DOMAINS)}); pass --domain", location)
        return DOMAINS[name]

    def _case(self, task: dict[str, Any], location: Location, domain: Tau2Domain, db: Tau2Db) -> Case:
        task_id = str(task.get("id", ""))
        instructions = ((task.get("user_scenario") or {}).get("instructions")) or {}
        if not task_id or not isinstance(instructions, dict) or not instructions.get("reason_for_call"):
            raise InputError("task needs an `id` and `user_scenario.instructions.reason_for_call`", location)
        criteria = task.get("evaluation_criteria") or {}
        actions = [a for a in criteria.get("actions") or [] if isinstance(a, dict) and "name" in a]
        words = " ".join(str(instructions.get(k) or "") for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions"))
        user = self._customer(words, actions, domain, db, location, task_id)
        records = self._records(user, words, actions, domain, db)
        in_play = any(a["name"] in _FLIGHT_TOOLS or a["name"] == "get_product_details" for a in actions)
        request = " ".join(str(instructions.get(k) or "") for k in ("reason_for_call", "task_instructions"))
        about = in_play or bool((_FLIGHT_REQUEST if domain is AIRLINE else _ITEM_REQUEST).search(request))
        writes = [a for a in actions if a["name"] in domain.write_tools]
        expected: dict[str, Any] = {"actions": [{"name": a["name"], "arguments": self._key_args(a, domain)} for a in writes]}
        inform = [str(i) for i in criteria.get("communicate_info") or [] if str(i).strip()]
        check = Check("set", {"field": "actions"})
        if inform:
            # What the customer asked to be told ("how much will I get back") must be in the reply.
            expected["reply"] = inform
            check = Check("set", {"field": "actions", "mentions": "reply"})
        description = task.get("description") or {}
        evidence = [s for s in criteria.get("nl_assertions") or [] if isinstance(s, str)]
        if description.get("purpose"):
            evidence.append(description["purpose"])
        notes = "\n".join(str(description[k]) for k in ("notes", "relevant_policies") if description.get(k))
        return Case(
            id=f"tau2-{domain.name}-{task_id}",
            category=self._category(writes, criteria.get("nl_assertions") or [], description.get("purpose") or "", domain, db, bool(inform)),
            source=Source("tau2", f"{Path(self.tasks_path).name}#{task_id}"),
            created=self.created,
            task=Task(
                input={
                    "text": customer_text(instructions),
                    "fields": {"customer": user, domain.records: records, **domain.context(db, records, actions, about, words)},
                },
                expected=expected,
                check=check,
                answer_format=domain.answer_format(),
            ),
            diagnosis=Diagnosis(evidence=evidence, notes=notes),
        )

    @staticmethod
    def _customer(words: str, actions: list[dict[str, Any]], domain: Tau2Domain, db: Tau2Db, location: Location, task_id: str) -> dict[str, Any]:
        """The customer: a stated user id, else one named in the actions, else the owner of a named record, else email or name + zip."""
        candidates = re.findall(r"user id is\W*([A-Za-z0-9_]+)", words, flags=re.IGNORECASE)
        # However the task names the customer ("You are ivan_hernandez_6923"): any word that is a user id.
        users = db.table("users")
        candidates += [w for w in re.findall(r"[A-Za-z0-9_]+", words) if "_" in w and w in users]
        candidates += [(a.get("arguments") or {}).get("user_id") for a in actions]
        for a in actions:
            record = db.table(domain.records).get((a.get("arguments") or {}).get(domain.record_key))
            candidates.append(record.get("user_id") if record else None)
        for rid in domain.record_ids(words):
            record = db.table(domain.records).get(rid)
            candidates.append(record.get("user_id") if record else None)
        named: list[str] = []
        for uid, u in users.items():
            email = u.get("email")
            name = u.get("name") or {}
            full = f"{name.get('first_name', '')} {name.get('last_name', '')}"
            zip_code = (u.get("address") or {}).get("zip")
            if (email and email in words) or (full.strip() and full in words and zip_code and zip_code in words):
                candidates.append(uid)
            elif full.strip() and re.search(rf"\b{re.escape(full)}\b", words):
                named.append(uid)
        if len(named) == 1:
            candidates.append(named[0])  # a full name alone, when only one customer has it
        for uid in candidates:
            if uid and (user := db.user(uid)):
                return user
        raise InputError(f"task {task_id}: cannot find the customer in the database {db.path}", location)

    @staticmethod
    def _records(user: dict[str, Any], words: str, actions: list[dict[str, Any]], domain: Tau2Domain, db: Tau2Db) -> list[dict[str, Any]]:
        table = db.table(domain.records)
        ids = list(user.get(domain.records) or [])
        ids += [(a.get("arguments") or {}).get(domain.record_key) for a in actions]
        ids += domain.record_ids(words)
        return [table[i] for i in dict.fromkeys(ids) if i in table]

    @staticmethod
    def _key_args(action: dict[str, Any], domain: Tau2Domain) -> dict[str, Any]:
        args = action.get("arguments") or {}
        compare = action.get("compare_args")
        keep = compare if isinstance(compare, list) else [k for k in args if k not in domain.free_text_args]
        return {k: args[k] for k in keep if k in args}

    @staticmethod
    def _category(writes: list[dict[str, Any]], assertions: list[str], purpose: str, domain: Tau2Domain, db: Tau2Db, inform: bool) -> str:
        names = {a["name"] for a in writes}
        for tool, (category, _) in domain.write_tools.items():
            if tool in names:
                return domain.refine(tool, [a for a in writes if a["name"] == tool], db) or category
        # The assertions say what the agent must (not) do; the purpose only when they say nothing usable.
        for text in (" ".join(str(a) for a in assertions), purpose):
            for pattern, category in domain.no_write_rules:
                if re.search(pattern, text, flags=re.IGNORECASE):
                    return category
        if inform:
            return "inform"  # nothing to write, but facts the customer must be told
        return "refuse"
