"""Case files: reading YAML and JSON Lines with `path:line` errors (stop
at the first, or collect all), finding them, writing them atomically.

A case file is either YAML holding a list of case mappings (``cases/*.yaml``) or JSON Lines with one
case object per line (``cases/*.jsonl``); formats/case.py shows one record.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from frames_cli.errors import InputError, Location
from frames_cli.formats.case import Case
from frames_cli.formats.case_record import RecordError, parse_record
from frames_cli.formats.problems import Problem
from frames_cli.formats.text import SafeLoader, decode_utf8, yaml_error_line
from frames_cli.formats.yamlbounds import check_yaml_bounds, json_too_deep
from frames_cli.files.atomic import atomic_write_text

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
            raise InputError(
                f"invalid YAML: {exc.problem or exc}", Location(path, yaml_error_line(exc, text))
            ) from None
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
                deep = json_too_deep(line)
                if deep:
                    yield RecordError(deep), Location(path, number), None
                    continue
                try:
                    record: Any = json.loads(line, parse_constant=_no_constant)
                except json.JSONDecodeError as exc:
                    # A broken line spoils only its own record, so the rest of the file is still checked.
                    record = RecordError(f"invalid JSON: {exc.msg} (column {exc.colno})")
                except ValueError as exc:
                    record = RecordError(str(exc))
                # Escaped or not, a control character is refused by parse_record with its key.
                yield record, Location(path, number), None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", Location(path)) from None


def _no_constant(name: str) -> Any:
    """json's hook for NaN and Infinity, which are not JSON: refuse them."""
    raise ValueError(f"{name} is not a JSON value (write a number or a string)")


def _iter_file(path: Path) -> Iterable[tuple[Any, Location, yaml.Node | None]]:
    suffix = path.suffix.lower()
    if suffix not in CASE_SUFFIXES:
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
                case = parse_record(record, location)
            except RecordError as exc:
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
        InputError: a matching file, or a folder on its way, is a symlink (`files.links`).
    """
    from frames_cli.files.links import refuse_symlink

    found = sorted(
        p for p in Path(root).glob(pattern)
        if p.is_file() and p.suffix.lower() in CASE_SUFFIXES and not p.name.startswith(".")
    )
    for path in found:
        refuse_symlink(Path(root), path, path.relative_to(root).as_posix())
    return found


def load_counted_cases(root: Path, pattern: str) -> list[Case]:
    """The cases that count for evaluation and evolution: those in `case_files(root, pattern)` minus
    generated cases still waiting for review (`reviewed: false`), which count once a person sets
    `reviewed: true`, and cases whose expected answer waits for a person (`review: needed`), which
    count once a person writes `review: confirmed` (`Case.counts`).

    Raises:
        InputError: no case file matches, the files hold no case that counts (exit code 2), or a
            case file is malformed (path:line).
    """
    paths = case_files(root, pattern)
    if not paths:
        raise InputError(
            f"no case files match {pattern!r} (.yaml, .yml or .jsonl); add cases with `frames ingest`", Location(root)
        )
    counted = [case for case in load_cases(paths) if case.counts]
    if not counted:
        raise InputError(
            f"the case files matching {pattern!r} hold no case that counts (reviewed, and no `review: needed`)",
            Location(paths[0]),
        )
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
        return (
            yaml.dump(records, Dumper=_CaseDumper, sort_keys=False, allow_unicode=True, width=100) if records
            else "[]\n"
        )
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
