"""Dataclass fields from a JSON object, strictly: unknown, missing
and mistyped keys are refused with the record's location."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from frames_cli.errors import InputError, Location


_JSON_KINDS: dict[str, tuple[type, ...]] = {
    "None": (type(None),),
    "bool": (bool,),
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "list": (list,),
    "dict": (dict,),
}


def fields_from(cls: type, data: Any, where: Location) -> dict[str, Any]:
    """The keyword arguments of dataclass `cls` from the JSON object `data`.

    Raises:
        InputError: `data` is not an object, lacks a field without default, has an unknown key, or a
            value whose JSON kind (object, list, string, number, bool) contradicts the field's type.
    """
    name = cls.__name__
    if not isinstance(data, dict):
        raise InputError(f"{name}: expected a JSON object, got {type(data).__name__}", where)
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise InputError(f"{name}: unknown keys {', '.join(unknown)}", where)
    missing = [
        f.name
        for f in known.values()
        if f.name not in data and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise InputError(f"{name}: missing keys {', '.join(missing)}", where)
    for key, value in data.items():
        kinds = _json_kinds(str(known[key].type))
        # bool is an int to isinstance, but `true` is no pass rate or round number.
        if kinds and (not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)):
            raise InputError(f"{name}.{key}: expected {known[key].type}, got {json.dumps(value)[:60]}", where)
    return dict(data)


def _json_kinds(annotation: str) -> tuple[type, ...]:
    """The Python types JSON produces for a field annotation (a string: `from __future__` is on);
    () when the annotation is not one of the simple kinds (then the value is not checked)."""
    kinds: list[type] = []
    for part in annotation.split("|"):
        head = part.strip().split("[", 1)[0]
        if head not in _JSON_KINDS:
            return ()
        kinds += _JSON_KINDS[head]
    return tuple(kinds)
