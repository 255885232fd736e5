"""tau2-bench tasks → cases: the customer's side and their records as input, the allowed write actions as expected.

One tau2 task becomes one case (see `Tau2Converter` for the rules). Domains differ only in a
`Tau2Domain` table (ingest/tau2/domains.py): which DB table holds the customer's records (airline reservations, retail
orders), which tools write, and how a write action names a category.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError, Location
from frames_cli.formats.case import Case, Check, Diagnosis, Source, Task
from frames_cli.formats.problems import Problem
from frames_cli.ingest.rows.account import Account
from frames_cli.ingest.tau2.customer import customer_text
from frames_cli.ingest.tau2.data import Tau2Db, read_tasks
from frames_cli.ingest.tau2.domains import AIRLINE, DOMAINS, Tau2Domain
from frames_cli.ingest.tau2.reach import untellable

_FLIGHT_REQUEST = re.compile(
    r"\b(chang|modif|upgrad|downgrad|push back|switch|book\b|rebook|reschedul|nonstop|cabin|business|economy)",
    re.IGNORECASE,
)
_FLIGHT_TOOLS = frozenset(
    {"search_direct_flight", "search_onestop_flight", "update_reservation_flights", "book_reservation"}
)
_ITEM_REQUEST = re.compile(r"\b(exchange|return|swap|replace|item|size|color|colour|modify|change)", re.IGNORECASE)


@dataclass
class Tau2Converter:
    """Converts tau2-bench tasks of one domain into cases (`frames ingest tau2`).

    Rules, per task:
        - input.text: the customer's side (`customer_text`); input.fields: the customer's profile,
          their records (all of their own, plus any the task names), and the domain's context
          (airline: flight status; prices and the direct and one-stop options on the routes in play
          when the request is about flights; retail: the products the customer names, and those of
          the items when items are in play).
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

    A case whose reply must mention a fact its input neither holds nor lets an agent work out
    (`tau2_reach.untellable`) is still written, with a warning and the reason in its account line:
    no agent can pass it until the input is completed.

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
            InputError: unreadable or malformed files, a database not shaped like the tasks' domain's
                (`Tau2Db.check_domain`), or a wanted or excluded task id that no task has.
        """
        tasks = read_tasks(self.tasks_path, self.shown)
        db = Tau2Db.load(self.db_path)
        wanted = set(self.task_ids) if self.task_ids is not None else None
        excluded = set(self.exclude)
        cases = []
        seen: set[str] = set()
        checked: set[str] = set()
        self.problems, self.account = [], Account()
        for task, location in tasks:
            task_id = str(task.get("id"))
            seen.add(task_id)
            if (wanted is not None and task_id not in wanted) or task_id in excluded:
                continue
            try:
                domain = self._domain(task, location)
                if domain.name not in checked:
                    db.check_domain(domain.name, domain.records)  # the whole database: not a task's fault
                    checked.add(domain.name)
                case = self._case(task, location, domain, db)
            except InputError as exc:
                if exc.location is not None and exc.location.path == db.path:
                    raise
                self.problems.append(Problem(location, f"{exc.message}; task skipped"))
                self.account.add(location, "skipped", exc.message, own_id=task_id)
                continue
            cases.append(case)
            self.account.add(location, "case", self._reach(case, location), case, own_id=task_id)
        for option, ids in (("--task", wanted or set()), ("--exclude-task", excluded)):
            missing = sorted(ids - seen)
            if missing:
                raise InputError(
                    f"no task with id {', '.join(map(repr, missing))} ({option})", Location(self.tasks_path)
                )
        return cases

    def _reach(self, case: Case, location: Location) -> str:
        """"" when `case` can be passed from its input; else why not (also a warning in `problems`)."""
        missing = untellable(case.task.expected.get("reply") or [], case.task.input)
        if not missing:
            return ""
        why = (
            "cannot be passed from its input: the reply must mention "
            + ", ".join(repr(m) for m in missing)
            + (
                ", which the input neither holds nor gives the amounts to work out (a record or catalog entry the "
                "conversation would have looked up)"
            )
        )
        self.problems.append(Problem(location, f"case {case.id} {why}", "warning"))
        return why

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
        words = " ".join(
            str(instructions.get(k) or "")
            for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions")
        )
        user = self._customer(words, actions, domain, db, location, task_id)
        records = self._records(user, words, actions, domain, db)
        in_play = any(a["name"] in _FLIGHT_TOOLS or a["name"] == "get_product_details" for a in actions)
        request = " ".join(str(instructions.get(k) or "") for k in ("reason_for_call", "task_instructions"))
        about = in_play or bool((_FLIGHT_REQUEST if domain is AIRLINE else _ITEM_REQUEST).search(request))
        writes = [a for a in actions if a["name"] in domain.write_tools]
        expected: dict[str, Any] = {
            "actions": [{"name": a["name"], "arguments": self._key_args(a, domain)} for a in writes]
        }
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
            category=self._category(
                writes, criteria.get("nl_assertions") or [], description.get("purpose") or "", domain, db, bool(inform)
            ),
            source=Source("tau2", f"{Path(self.tasks_path).name}#{task_id}"),
            created=self.created,
            task=Task(
                input={
                    "text": customer_text(instructions),
                    "fields": {
                        "customer": user, domain.records: records, **domain.context(db, records, actions, about, words),
                    },
                },
                expected=expected,
                check=check,
                answer_format=domain.answer_format(),
            ),
            diagnosis=Diagnosis(evidence=evidence, notes=notes),
        )

    @staticmethod
    def _customer(
        words: str, actions: list[dict[str, Any]], domain: Tau2Domain, db: Tau2Db, location: Location, task_id: str
    ) -> dict[str, Any]:
        """The customer: a stated user id, else one named in the actions,
        else the owner of a named record, else email or name + zip."""
        candidates = re.findall(r"user id is\W*([A-Za-z0-9_]+)", words, flags=re.IGNORECASE)
        # However the task names the customer ("You are ivan_hernandez_6923"): any word that is a user id.
        users = db.table("users")
        candidates += [w for w in re.findall(r"[A-Za-z0-9_]+", words) if "_" in w and w in users]
        candidates += [(a.get("arguments") or {}).get("user_id") for a in actions]
        for a in actions:
            record = db.row(domain.records, (a.get("arguments") or {}).get(domain.record_key))
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
    def _records(
        user: dict[str, Any], words: str, actions: list[dict[str, Any]], domain: Tau2Domain, db: Tau2Db
    ) -> list[dict[str, Any]]:
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
    def _category(
        writes: list[dict[str, Any]], assertions: list[str], purpose: str, domain: Tau2Domain, db: Tau2Db, inform: bool
    ) -> str:
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
