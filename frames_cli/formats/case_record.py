"""One case record (a parsed mapping) → Case: every key and type checked, the bad field named by its key path."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from frames_cli.errors import InputError, Location
from frames_cli.formats.case import LABELS, REVIEW_STATES, Case, Check, Diagnosis, Source, Task
from frames_cli.registry import CHECKS
from frames_cli.sanitize import LINE_BREAKS, unsafe_value

CASE_KEYS = (
    "id", "category", "source", "created", "task", "diagnosis", "priors", "generated", "reviewed", "also_from",
    "must_pass", "label", "review",
)
TASK_KEYS = ("input", "expected", "check", "answer_format")
DIAGNOSIS_KEYS = ("symptom", "cause", "notes", "trajectory", "evidence")
_REQUIRED = ("id", "category", "task")


class RecordError(Exception):
    """A bad field inside one record; `key` names the field so its line can be found."""

    def __init__(self, message: str, key: tuple[str, ...] = ()):
        super().__init__(message)
        self.key = key


_TYPE_NAMES = {str: "a string", dict: "a mapping", list: "a list", bool: "true or false"}


def _want(value: Any, tp: type, what: str, key: tuple[str, ...]) -> Any:
    if not isinstance(value, tp):
        raise RecordError(f"`{what}` must be {_TYPE_NAMES[tp]}, got {type(value).__name__}", key)
    return value


def _str_list(value: Any, what: str, key: tuple[str, ...]) -> list[str]:
    _want(value, list, what, key)
    if not all(isinstance(v, str) for v in value):
        raise RecordError(f"`{what}` must be a list of strings", key)
    return list(value)


def _unknown(record: dict[str, Any], known: Sequence[str], prefix: str, key: tuple[str, ...]) -> None:
    for name in record:
        if name not in known:
            raise RecordError(f"unknown key `{prefix}{name}` (known: {', '.join(known)})", (*key, str(name)))


def _source(value: Any, what: str, key: tuple[str, ...]) -> Source:
    _want(value, dict, what, key)
    _unknown(value, ("kind", "ref"), f"{what}.", key)
    kind = _want(value.get("kind"), str, f"{what}.kind", (*key, "kind"))
    return Source(kind, str(_want(value.get("ref", ""), str, f"{what}.ref", (*key, "ref"))))


def _task(value: Any) -> Task:
    key = ("task",)
    _want(value, dict, "task", key)
    _unknown(value, TASK_KEYS, "task.", key)
    for name in ("input", "expected", "check"):
        if name not in value:
            raise RecordError(f"missing key `task.{name}`", key)
    raw_input = value["input"]
    if isinstance(raw_input, str):
        task_input: dict[str, Any] = {"text": raw_input, "fields": {}}
    else:
        _want(raw_input, dict, "task.input", (*key, "input"))
        _unknown(raw_input, ("text", "fields"), "task.input.", (*key, "input"))
        task_input = {
            "text": _want(raw_input.get("text", ""), str, "task.input.text", (*key, "input", "text")),
            "fields": _want(raw_input.get("fields", {}), dict, "task.input.fields", (*key, "input", "fields")),
        }
    raw_check = value["check"]
    if isinstance(raw_check, str):
        raw_check = {"kind": raw_check}
    _want(raw_check, dict, "task.check", (*key, "check"))
    kind = raw_check.get("kind")
    if kind not in CHECKS.builtins:
        raise RecordError(f"unknown check kind {kind!r} (valid: {', '.join(CHECKS.names())})", (*key, "check"))
    options = {k: v for k, v in raw_check.items() if k != "kind"}
    answer_format = _want(value.get("answer_format", ""), str, "task.answer_format", (*key, "answer_format"))
    return Task(task_input, value["expected"], Check(kind, options), answer_format)


def _diagnosis(value: Any) -> Diagnosis:
    key = ("diagnosis",)
    _want(value, dict, "diagnosis", key)
    _unknown(value, DIAGNOSIS_KEYS, "diagnosis.", key)
    texts = {n: _want(value.get(n, ""), str, f"diagnosis.{n}", (*key, n)) for n in ("symptom", "cause", "notes")}
    trajectory = _want(value.get("trajectory", []), list, "diagnosis.trajectory", (*key, "trajectory"))
    if not all(isinstance(step, dict) for step in trajectory):
        raise RecordError("`diagnosis.trajectory` must be a list of mappings", (*key, "trajectory"))
    evidence = _str_list(value.get("evidence", []), "diagnosis.evidence", (*key, "evidence"))
    return Diagnosis(trajectory=trajectory, evidence=evidence, **texts)


def case_from_dict(record: Any, location: Location | None = None) -> Case:
    """Build a Case from one parsed record.

    Raises:
        InputError: missing or unknown key, wrong type, empty id or category, unknown check kind,
            a control character in any text (an invisible one or a line break in the id or
            category), however written; located at `location` (the record's first line).
    """
    try:
        return parse_record(record, location)
    except RecordError as exc:
        raise InputError(str(exc), location) from None


def parse_record(record: Any, location: Location | None) -> Case:
    """Build a Case from one parsed record (a RecordError itself, made by a reader, is raised).

    Raises:
        RecordError: the first bad field, with its key path.
    """
    if isinstance(record, RecordError):
        raise record
    if not isinstance(record, dict):
        raise RecordError(f"a case must be a mapping, got {type(record).__name__}")
    _unknown(record, CASE_KEYS, "", ())
    for name in _REQUIRED:
        if name not in record:
            raise RecordError(f"missing key `{name}`")
    case_id = record["id"]
    if isinstance(case_id, int) and not isinstance(case_id, bool):
        case_id = str(case_id)
    if not isinstance(case_id, str) or not case_id.strip():
        raise RecordError("`id` must be a non-empty string", ("id",))
    category = record["category"]
    if not isinstance(category, str) or not category.strip():
        raise RecordError("`category` must be a non-empty string", ("category",))
    found = unsafe_value({"id": case_id, "category": category}, one_line=True) or unsafe_value(record, invisible=False)
    if found is not None:
        where, bad = found
        kind = "a line break or tab" if bad.char in LINE_BREAKS else f"the character {bad.describe()}"
        # However it was written (raw, a YAML `\e` or a JSON `\u001b` escape), it would reach terminals and prompts.
        raise RecordError(
            f"`{'.'.join(where)}` holds {kind}; case text is plain text"
            + (" and ids and categories are one line" if kind.startswith("a line") else ""),
            where,
        )
    nan_at = _non_finite(record, ())
    if nan_at is not None:
        raise RecordError(
            f"`{'.'.join(nan_at)}` is not a finite number (NaN or infinity): no answer can match it; write a number or "
            "a string",
            nan_at,
        )
    created = record.get("created", "")
    return Case(
        id=case_id,
        category=category,
        source=_source(record.get("source", {"kind": "manual"}), "source", ("source",)),
        created=str(created) if created is not None else "",
        task=_task(record["task"]),
        diagnosis=_diagnosis(record.get("diagnosis", {})),
        priors=_str_list(record.get("priors", []), "priors", ("priors",)),
        generated=_want(record.get("generated", False), bool, "generated", ("generated",)),
        reviewed=_want(record.get("reviewed", True), bool, "reviewed", ("reviewed",)),
        also_from=[
            _source(s, "also_from[]", ("also_from",))
            for s in _want(record.get("also_from", []), list, "also_from", ("also_from",))
        ],
        must_pass=_must_pass(record.get("must_pass", False)),
        label=_label(record.get("label")),
        review=_review(record.get("review")),
        location=location,
    )


def _non_finite(value: Any, key: tuple[str, ...]) -> tuple[str, ...] | None:
    """The key path of the first NaN or infinity inside `value` (YAML `.nan`, `.inf`), or None.

    Refused because NaN equals nothing (an `exact` check of it can never pass) and neither is
    JSON, which every record frames writes is.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return key
    if isinstance(value, dict):
        items = ((str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        return None
    for name, item in items:
        found = _non_finite(item, (*key, name))
        if found is not None:
            return found
    return None


def _must_pass(value: Any) -> bool | str:
    if isinstance(value, bool) or value == "category":
        return value
    raise RecordError(f"`must_pass` must be true, false or `category`, got {value!r}", ("must_pass",))


def _review(value: Any) -> str | None:
    if value is None or value in REVIEW_STATES:
        return value
    raise RecordError(
        f"`review` must be `needed` (the expected answer waits for a person) or `confirmed`, got {value!r}", ("review",)
    )


def _label(value: Any) -> str | None:
    if value is None or value in LABELS:
        return value
    raise RecordError(
        f"`label` must be `confirmed` or `disputed` (a person's decision on a disputed label), got {value!r}",
        ("label",),
    )
