"""Cases f = (m, t) (DESIGN §2): dataclasses, YAML / JSON Lines reading with `path:line` errors, writing.

A case file is either YAML holding a list of case mappings (``cases/*.yaml``) or JSON Lines with one
case object per line (``cases/*.jsonl``). One record::

    id: tau2-airline-0
    category: refuse
    source: {kind: tau2, ref: "tasks.json#0"}
    created: "2026-11-29"
    task:                       # t: what the agent sees (input, answer_format) and how it is scored
      input: {text: "...", fields: {...}}     # or a plain string
      answer_format: "..."      # the answer's shape, told to the agent
      expected: {actions: []}
      check: {kind: set, field: actions}      # kind + options, see evaluation/checks.py
    diagnosis:                  # m: never shown to the agent under test
      symptom: ""; cause: ""; notes: ""; trajectory: []; evidence: ["..."]
    priors: []                  # advice that cannot be turned into a check
    generated: false
    reviewed: true
    also_from: []               # the same case found in other sources
    must_pass: true             # optional: the gate rejects any child that breaks this case;
                                # `category` marks every case of its category must-pass
    label: confirmed            # optional, a person's decision on a label a diagnoser disputed:
                                # `confirmed` (the expected result stands) or `disputed` (it is wrong)
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from frames_cli.errors import InputError, Location
from frames_cli.formats.problems import Problem
from frames_cli.formats.text import SafeLoader, decode_utf8, yaml_error_line
from frames_cli.formats.yamlbounds import check_yaml_bounds
from frames_cli.sanitize import find_unsafe
from frames_cli.registry import CHECKS
from frames_cli.workspace.atomic import atomic_write_text

_SAFE_LOADER = SafeLoader


class _CaseDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Safe YAML dumper that writes multi-line text as `|` blocks, so case files diff line by line.

    It writes no anchors or aliases (`&id001`, `*id001`): cases sharing one object (the same
    evidence list) are written out in full, so each record reads, diffs and moves alone.
    """

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not value.endswith((" ", "\n\n")) and "\t" not in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_CaseDumper.add_representer(str, _str_representer)

CASE_KEYS = ("id", "category", "source", "created", "task", "diagnosis", "priors", "generated", "reviewed", "also_from", "must_pass", "label")
TASK_KEYS = ("input", "expected", "check", "answer_format")
DIAGNOSIS_KEYS = ("symptom", "cause", "notes", "trajectory", "evidence")
_REQUIRED = ("id", "category", "task")


@dataclass
class Check:
    """How an output is compared with `expected`: a kind from `registry.CHECKS` and its options."""

    kind: str
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The `task.check` mapping as a case file holds it: {"kind": kind, **options}."""
        return {"kind": self.kind, **self.options}


@dataclass
class Task:
    """t: what the agent under test sees and how it is scored.

    Attributes:
        input: ``{"text": str, "fields": {...}}`` (a plain string in a file becomes ``text``).
        expected: the ground truth, in the shape `answer_format` describes.
        check: the comparison.
        answer_format: the answer's shape in words; shown to the agent.
    """

    input: dict[str, Any]
    expected: Any
    check: Check
    answer_format: str = ""


@dataclass
class Diagnosis:
    """m: the diagnosis record, read by diagnosers and never by the agent under test.

    Attributes:
        evidence: the one or few sentences of rule that decide the case.
        trajectory: steps ``{"state", "action", "result"}`` of a recorded failure.
    """

    symptom: str = ""
    cause: str = ""
    notes: str = ""
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)


@dataclass
class Source:
    """Where a case came from: `kind` (a converter name, "manual", ...) and a reference inside it."""

    kind: str
    ref: str = ""


@dataclass(frozen=True)
class AgentCase:
    """The only view of a case the agent under test gets: no expected answer, no diagnosis."""

    id: str
    input: dict[str, Any]
    answer_format: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: {"id", "input", "answer_format"}; nothing else of the case."""
        return {"id": self.id, "input": self.input, "answer_format": self.answer_format}


@dataclass
class Case:
    """One case f = (m, t); `location` is where it was read and is never written back.

    `must_pass`: False, True (no child may turn this case from pass to fail) or "category" (the
    same for every case of its category); see `must_pass_ids`.
    `label`: None (nobody decided), "confirmed" or "disputed": a person's decision after a diagnoser
    said the expected result contradicts the policy (evolution/disputes.py). A disputed case counts
    in no gate, front or diagnosis until it is `confirmed`.
    """

    id: str
    category: str
    source: Source
    created: str
    task: Task
    diagnosis: Diagnosis = field(default_factory=Diagnosis)
    priors: list[str] = field(default_factory=list)
    generated: bool = False
    reviewed: bool = True
    also_from: list[Source] = field(default_factory=list)
    must_pass: bool | str = False
    label: str | None = None
    location: Location | None = field(default=None, compare=False)

    def agent_view(self) -> AgentCase:
        """The case as the agent under test sees it: id, input and answer format only."""
        return AgentCase(self.id, self.task.input, self.task.answer_format)

    def to_dict(self) -> dict[str, Any]:
        """The record as written to a case file (key order fixed, `location` left out; `must_pass`
        and `label` only when set, so files without them are written as they were)."""
        record = {
            "id": self.id,
            "category": self.category,
            "source": {"kind": self.source.kind, "ref": self.source.ref},
            "created": self.created,
            "task": {
                "input": self.task.input,
                "answer_format": self.task.answer_format,
                "expected": self.task.expected,
                "check": self.task.check.to_dict(),
            },
            "diagnosis": {
                "symptom": self.diagnosis.symptom,
                "cause": self.diagnosis.cause,
                "notes": self.diagnosis.notes,
                "trajectory": self.diagnosis.trajectory,
                "evidence": self.diagnosis.evidence,
            },
            "priors": self.priors,
            "generated": self.generated,
            "reviewed": self.reviewed,
            "also_from": [{"kind": s.kind, "ref": s.ref} for s in self.also_from],
        }
        if self.must_pass is not False:
            record["must_pass"] = self.must_pass
        if self.label is not None:
            record["label"] = self.label
        return record


class _RecordError(Exception):
    """A bad field inside one record; `key` names the field so its line can be found."""

    def __init__(self, message: str, key: tuple[str, ...] = ()):
        super().__init__(message)
        self.key = key


_TYPE_NAMES = {str: "a string", dict: "a mapping", list: "a list", bool: "true or false"}


def _want(value: Any, tp: type, what: str, key: tuple[str, ...]) -> Any:
    if not isinstance(value, tp):
        raise _RecordError(f"`{what}` must be {_TYPE_NAMES[tp]}, got {type(value).__name__}", key)
    return value


def _str_list(value: Any, what: str, key: tuple[str, ...]) -> list[str]:
    _want(value, list, what, key)
    if not all(isinstance(v, str) for v in value):
        raise _RecordError(f"`{what}` must be a list of strings", key)
    return list(value)


def _unknown(record: dict[str, Any], known: Sequence[str], prefix: str, key: tuple[str, ...]) -> None:
    for name in record:
        if name not in known:
            raise _RecordError(f"unknown key `{prefix}{name}` (known: {', '.join(known)})", (*key, str(name)))


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
            raise _RecordError(f"missing key `task.{name}`", key)
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
        raise _RecordError(f"unknown check kind {kind!r} (valid: {', '.join(CHECKS.names())})", (*key, "check"))
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
        raise _RecordError("`diagnosis.trajectory` must be a list of mappings", (*key, "trajectory"))
    evidence = _str_list(value.get("evidence", []), "diagnosis.evidence", (*key, "evidence"))
    return Diagnosis(trajectory=trajectory, evidence=evidence, **texts)


def case_from_dict(record: Any, location: Location | None = None) -> Case:
    """Build a Case from one parsed record.

    Raises:
        InputError: missing or unknown key, wrong type, empty id or category, unknown check kind;
            located at `location` (the record's first line).
    """
    try:
        return _case(record, location)
    except _RecordError as exc:
        raise InputError(str(exc), location) from None


def _case(record: Any, location: Location | None) -> Case:
    if isinstance(record, _RecordError):
        raise record
    if not isinstance(record, dict):
        raise _RecordError(f"a case must be a mapping, got {type(record).__name__}")
    _unknown(record, CASE_KEYS, "", ())
    for name in _REQUIRED:
        if name not in record:
            raise _RecordError(f"missing key `{name}`")
    case_id = record["id"]
    if isinstance(case_id, int) and not isinstance(case_id, bool):
        case_id = str(case_id)
    if not isinstance(case_id, str) or not case_id.strip():
        raise _RecordError("`id` must be a non-empty string", ("id",))
    category = record["category"]
    if not isinstance(category, str) or not category.strip():
        raise _RecordError("`category` must be a non-empty string", ("category",))
    where = _non_finite(record, ())
    if where is not None:
        raise _RecordError(f"`{'.'.join(where)}` is not a finite number (NaN or infinity): no answer can match it; write a number or a string", where)
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
    raise _RecordError(f"`must_pass` must be true, false or `category`, got {value!r}", ("must_pass",))


#: A person's decisions on a disputed label (`Case.label`).
LABELS = ("confirmed", "disputed")


def _label(value: Any) -> str | None:
    if value is None or value in LABELS:
        return value
    raise _RecordError(f"`label` must be `confirmed` or `disputed` (a person's decision on a disputed label), got {value!r}", ("label",))


def must_pass_ids(cases: Iterable[Case]) -> set[str]:
    """Ids of the must-pass cases: those marked `must_pass: true`, and every case of a category in
    which some case is marked `must_pass: category`."""
    cases = list(cases)
    whole = {c.category for c in cases if c.must_pass == "category"}
    return {c.id for c in cases if c.must_pass is True or c.category in whole}


def _key_line(node: yaml.Node, key: tuple[str, ...]) -> int:
    """1-based line of the deepest mapping key along `key` inside `node` (the record's line if none)."""
    line = node.start_mark.line + 1
    for part in key:
        if not isinstance(node, yaml.MappingNode):
            break
        for key_node, value_node in node.value:
            if key_node.value == part:
                line, node = key_node.start_mark.line + 1, value_node
                break
        else:
            break
    return line


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", Location(path)) from None
    # Case text may be in any script (RTL marks, emoji joiners): only control characters are refused.
    return decode_utf8(data, path, invisible=False)


def _records_yaml(path: Path, text: str) -> Iterable[tuple[Any, Location, yaml.Node | None]]:
    check_yaml_bounds(text, path)
    loader = _SAFE_LOADER(text)
    try:
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else []
        except yaml.MarkedYAMLError as exc:
            raise InputError(f"invalid YAML: {exc.problem or exc}", Location(path, yaml_error_line(exc, text))) from None
    finally:
        loader.dispose()
    if node is None:
        return
    if not isinstance(node, yaml.SequenceNode) or not isinstance(data, list):
        raise InputError("a YAML case file must be a list of cases", Location(path, node.start_mark.line + 1))
    for item_node, record in zip(node.value, data):
        yield record, Location(path, item_node.start_mark.line + 1), item_node


def _records_jsonl(path: Path) -> Iterable[tuple[Any, Location, yaml.Node | None]]:
    # Streamed line by line: a large file is never held as one string next to its records.
    try:
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(f"not UTF-8 text (byte {exc.start} of the line)", Location(path, number)) from None
                if not line.strip():
                    continue
                try:
                    record: Any = json.loads(line, parse_constant=_no_constant)
                except json.JSONDecodeError as exc:
                    # A broken line spoils only its own record, so the rest of the file is still checked.
                    record = _RecordError(f"invalid JSON: {exc.msg} (column {exc.colno})")
                except ValueError as exc:
                    record = _RecordError(str(exc))
                # Raw, or written as a \u escape: a control character in a case is refused as in YAML.
                bad = find_unsafe(line if "\\u" not in line else "\n".join(_texts(record)), invisible=False)
                if bad is not None and not isinstance(record, _RecordError):
                    record = _RecordError(f"control character {bad.describe()} in the record; remove it")
                yield record, Location(path, number), None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", Location(path)) from None


def _texts(value: Any) -> Iterable[str]:
    """Every string (keys included) of decoded JSON `value`."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)


def _no_constant(name: str) -> Any:
    """json's hook for NaN and Infinity, which are not JSON: refuse them."""
    raise ValueError(f"{name} is not a JSON value (write a number or a string)")


def _iter_file(path: Path) -> Iterable[tuple[Any, Location, yaml.Node | None]]:
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".jsonl"):
        raise InputError("case files must end in .yaml, .yml or .jsonl", Location(path))
    return _records_jsonl(path) if suffix == ".jsonl" else _records_yaml(path, _read_text(path))


def _scan(paths: Iterable[Path | str], collect: bool) -> tuple[list[Case], list[Problem]]:
    """Read every record of every file; stop at the first problem unless `collect`.

    The cycle collector is paused meanwhile: parsed records are trees (reference counting frees
    them), yet the growing heap of cases kept triggering full collections that walked it all
    again, two thirds of the time of loading 10,000 tau2 cases (7.2 s against 2.5 s paused).
    Cycles made meanwhile are collected once it runs again.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _scan_records(paths, collect)
    finally:
        if enabled:
            gc.enable()


def _scan_records(paths: Iterable[Path | str], collect: bool) -> tuple[list[Case], list[Problem]]:
    cases: list[Case] = []
    problems: list[Problem] = []
    seen: dict[str, Location] = {}

    def problem(message: str, location: Location) -> None:
        if not collect:
            raise InputError(message, location)
        problems.append(Problem(location, message))

    for raw_path in paths:
        path = Path(raw_path)
        try:
            records = list(_iter_file(path))
        except InputError as exc:
            problem(exc.message, exc.location or Location(path))
            continue
        for record, location, node in records:
            try:
                case = _case(record, location)
            except _RecordError as exc:
                line = _key_line(node, exc.key) if node is not None else location.line
                problem(str(exc), Location(path, line))
                continue
            if case.id in seen:
                problem(f"duplicate case id {case.id!r} (first at {seen[case.id]})", location)
                continue
            seen[case.id] = location
            cases.append(case)
    return cases, problems


CASE_SUFFIXES = (".yaml", ".yml", ".jsonl")


def case_files(root: Path, pattern: str) -> list[Path]:
    """The case files matching the glob `pattern` below `root`, sorted.

    Only `.yaml`, `.yml` and `.jsonl` files count; hidden files (editor backups, `.frames`) do not.

    Raises:
        InputError: a matching file, or a folder on its way, is a symlink (`workspace.links`).
    """
    from frames_cli.workspace.links import refuse_symlink

    found = sorted(
        p for p in Path(root).glob(pattern) if p.is_file() and p.suffix.lower() in CASE_SUFFIXES and not p.name.startswith(".")
    )
    for path in found:
        refuse_symlink(Path(root), path, path.relative_to(root).as_posix())
    return found


def load_counted_cases(root: Path, pattern: str) -> list[Case]:
    """The cases that count for evaluation and evolution: those in `case_files(root, pattern)` minus
    generated cases still waiting for review (`reviewed: false`), which count once a person sets
    `reviewed: true`.

    Raises:
        InputError: no case file matches, the files hold no case that counts (exit code 2), or a
            case file is malformed (path:line).
    """
    paths = case_files(root, pattern)
    if not paths:
        raise InputError(f"no case files match {pattern!r} (.yaml, .yml or .jsonl); add cases with `frames ingest`", Location(root))
    counted = [case for case in load_cases(paths) if case.reviewed]
    if not counted:
        raise InputError(f"the case files matching {pattern!r} hold no case that counts (reviewed)", Location(paths[0]))
    return counted


def load_cases(paths: Iterable[Path | str]) -> list[Case]:
    """Read cases from YAML (`.yaml`, `.yml`) and JSON Lines (`.jsonl`) files, in order.

    Ids must be unique across all files.

    Raises:
        InputError: at the first bad record, as ``path:line: message`` (exit code 2).
    """
    return _scan(paths, collect=False)[0]


def check_case_files(paths: Iterable[Path | str]) -> tuple[list[Case], list[Problem]]:
    """Read cases like `load_cases` but collect every problem instead of stopping at the first.

    Returns:
        (the good cases, the problems found), for `frames validate` and `frames ingest`.
    """
    return _scan(paths, collect=True)


def dump_cases(cases: Sequence[Case], suffix: str) -> str:
    """The text of a case file holding `cases`: YAML list for ``.yaml``/``.yml``, else JSON Lines."""
    records = [case.to_dict() for case in cases]
    if suffix.lower() in (".yaml", ".yml"):
        return yaml.dump(records, Dumper=_CaseDumper, sort_keys=False, allow_unicode=True, width=100) if records else "[]\n"
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in records)


def write_cases(path: Path | str, cases: Sequence[Case]) -> None:
    """Write `cases` to `path` atomically, YAML or JSON Lines by its suffix.

    Raises:
        InputError: duplicate ids or an unsupported suffix (nothing is written).
    """
    path = Path(path)
    if path.suffix.lower() not in CASE_SUFFIXES:
        raise InputError("case files must end in .yaml, .yml or .jsonl", Location(path))
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise InputError(f"duplicate case id {case.id!r}", Location(path))
        seen.add(case.id)
    atomic_write_text(path, dump_cases(cases, path.suffix))
