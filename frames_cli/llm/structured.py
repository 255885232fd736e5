"""JSON answers: extraction from chatty or fenced replies and JSON-Schema validation."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

import fastjsonschema

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
# Validators are built once per schema object (schemas are module constants in llm/schemas.py).
_VALIDATORS: dict[int, tuple[dict[str, Any], tuple[Callable[[Any], Any] | None, Any]]] = {}
# More errors than this only lengthen the repair prompt.
MAX_ERRORS = 5


class AnswerError(ValueError):
    """The reply holds no JSON answer, or the answer does not match the schema.

    Attributes:
        errors: one line per problem, shown to the model in the repair turn.
    """

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("; ".join(errors))


def extract_json(text: str) -> Any:
    """The JSON value a reply carries: the whole text, else a fenced block, else the first object.

    Chatty replies ("Sure! Here is the answer: {...}") and ```json fences are both accepted; when
    several candidates parse, the first fenced block wins, then the first top-level object or array.

    Raises:
        AnswerError: no parseable JSON object or array in `text`.
    """
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block)
        except ValueError:
            continue
    for match in re.finditer(r"[{\[]", text):
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except ValueError:
            continue
        return value
    raise AnswerError(["the reply contains no JSON object (it may be truncated or malformed)"])


def _validators(schema: dict[str, Any]) -> tuple[Callable[[Any], Any] | None, Any]:
    """(fastjsonschema's compiled check or None, jsonschema's validator) of `schema`, built once.

    fastjsonschema compiles the schema to Python code: a whole `parse_answer` of a typical
    executor answer takes ~6 µs, jsonschema's `is_valid` alone ~29 µs (measured here; every model
    call pays it). fastjsonschema reports only its first error, though; jsonschema, the reference,
    lists every error for the repair turn and has the last word when the fast check fails. An answer
    the fast check passes is not checked again, so the fast check is built only for schemas it reads
    as jsonschema does (`_FAST_KEYWORDS`); any other schema gets None and jsonschema alone.
    """
    held = _VALIDATORS.get(id(schema))
    if held is None or held[0] is not schema:
        import jsonschema

        cls = jsonschema.validators.validator_for(schema)
        held = (schema, (fastjsonschema.compile(schema) if _fast_reads_alike(schema) else None, cls(schema)))
        _VALIDATORS[id(schema)] = held
    return held[1]


# Keywords that fastjsonschema (drafts 4-7) and jsonschema (draft 2020-12 when a schema names none)
# apply alike. Left out: `enum` and `const` (fastjsonschema compares with `in`/`==`, so true passes
# for 1), keywords of drafts 2019-09 and later (fastjsonschema ignores them: `prefixItems`,
# `dependentRequired`, `unevaluatedProperties`, ...), `$ref`/`$schema`, and `items` as a list.
_FAST_KEYWORDS = frozenset(
    {"type", "properties", "required", "items", "additionalProperties", "anyOf", "allOf", "oneOf", "not",
     "minLength", "maxLength", "minItems", "maxItems", "title", "description"}
)


def _fast_reads_alike(schema: Any) -> bool:
    """Whether every (sub)schema of `schema` uses only `_FAST_KEYWORDS` (booleans are schemas too)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or not schema.keys() <= _FAST_KEYWORDS or isinstance(schema.get("items", {}), list):
        return False
    subschemas = [*schema.get("properties", {}).values(), *(schema[k] for k in ("items", "additionalProperties", "not") if k in schema)]
    subschemas += [s for k in ("anyOf", "allOf", "oneOf") for s in schema.get(k, [])]
    return all(_fast_reads_alike(s) for s in subschemas)


def parse_answer(text: str | None, schema: dict[str, Any]) -> Any:
    """Extract the JSON answer from `text` and validate it against `schema`.

    Returns:
        The parsed JSON value.

    Raises:
        AnswerError: no JSON, or schema violations (at most MAX_ERRORS, each `at <path>: <message>`).
    """
    if not text:
        raise AnswerError(["the reply is empty"])
    data = extract_json(text)
    fast, validator = _validators(schema)
    if fast is not None:
        try:
            fast(data)
            return data
        except fastjsonschema.JsonSchemaValueException:
            pass  # jsonschema lists the errors below
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return data
    raise AnswerError([f"at {'/'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}" for e in errors[:MAX_ERRORS]])
