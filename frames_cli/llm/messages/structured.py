"""JSON answers: extraction from chatty or fenced replies and JSON-Schema validation."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
# Validators are built once per schema object (schemas are module constants in llm/messages/schemas.py).
_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}
# More errors than this only lengthen the repair prompt.
MAX_ERRORS = 5
#: Places a JSON value is looked for in a chatty reply at most (each `{` or `[`): a reply of
#: thousands of brackets is not searched thousands of times.
MAX_STARTS = 100


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
        AnswerError: no parseable JSON object or array in `text` (among its first MAX_STARTS
            brackets), or one nested more than formats/yamlbounds.MAX_DEPTH levels.
    """
    from frames_cli.formats.yamlbounds import json_too_deep

    deep = json_too_deep(text)
    if deep:
        # json recurses per level (a RecursionError, not a ValueError), and each `[` of a bracket
        # storm would be tried as a start: refused in one linear pass instead.
        raise AnswerError([f"the reply's {deep}; answer with the flat JSON object asked for"])
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
    for match in itertools.islice(re.finditer(r"[{\[]", text), MAX_STARTS):
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except ValueError:
            continue
        return value
    raise AnswerError(["the reply contains no JSON object (it may be truncated or malformed)"])


def _validator(schema: dict[str, Any]) -> Any:
    held = _VALIDATORS.get(id(schema))
    if held is None or held[0] is not schema:
        import jsonschema

        cls = jsonschema.validators.validator_for(schema)
        held = (schema, cls(schema))
        _VALIDATORS[id(schema)] = held
    return held[1]


def parse_answer(text: str | None, schema: dict[str, Any]) -> Any:
    """Extract the JSON answer from `text` and validate it against `schema`.

    Returns:
        The parsed JSON value.

    Raises:
        AnswerError: no JSON, a lone surrogate in a string (no file can hold it), or schema
            violations (at most MAX_ERRORS, each `at <path>: <message>`).
    """
    if not text:
        raise AnswerError(["the reply is empty"])
    data = extract_json(text)
    surrogate = _lone_surrogate(data)
    if surrogate is not None:
        # `"\ud800"` is valid JSON and no text: it cannot be written to any file.
        raise AnswerError(
            [
                f"at {surrogate or '(top level)'}: a lone surrogate escape (\\ud800-\\udfff) is not text; write the "
                "character itself"
            ]
        )
    validator = _validator(schema)
    # is_valid is about twice as fast as collecting errors, and nearly every answer is valid.
    if validator.is_valid(data):
        return data
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    raise AnswerError(
        [f"at {'/'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}" for e in errors[:MAX_ERRORS]]
    )


def _lone_surrogate(value: Any, path: str = "") -> str | None:
    """The JSON path of the first string (or key) in `value` holding a lone surrogate, else None."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if any("\ud800" <= c <= "\udfff" for c in item):
                return where
        elif isinstance(item, dict):
            stack += [(f"{where}/{k}".lstrip("/"), v) for k, v in item.items()] + [(where, k) for k in item]
        elif isinstance(item, list):
            stack += [(f"{where}/{i}".lstrip("/"), v) for i, v in enumerate(item)]
    return None
