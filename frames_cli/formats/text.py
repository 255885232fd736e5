"""Reading user text files: UTF-8 decoding and YAML error lines, each reported at the line a person can find."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import yaml

from frames_cli.errors import InputError, Location
from frames_cli.sanitize import find_unsafe


def decode_utf8(
    data: bytes, path: Path | str, *, error: type[InputError] = InputError, encoding: str = "utf-8",
    invisible: bool = True,
) -> str:
    """`data` decoded as UTF-8 (`encoding="utf-8-sig"` also drops a byte-order mark), refused when
    it holds a control character (NUL, ESC, ...: `sanitize.find_unsafe`) or, when `invisible`, a
    bidirectional or zero-width one (which hide or reorder text a reviewer reads).

    Raises:
        `error` (an InputError class): `path:line: not UTF-8 text (byte N)`, where line is the
            1-based line holding the first bad byte and N its 0-based offset in the file; or
            `path:line: control character U+0000 (NUL) at column C; ...`.
    """
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"not UTF-8 text (byte {exc.start})", Location(path, line)) from None
    # A byte-order mark at the very start is an encoding signature, not hidden text.
    bad = find_unsafe(text[1:] if text.startswith("\ufeff") else text, invisible=invisible)
    if bad is not None:
        column = bad.column + (1 if text.startswith("\ufeff") and bad.line == 1 else 0)
        kind = "control" if unicodedata.category(bad.char) == "Cc" else "invisible (bidirectional or zero-width)"
        raise error(
            f"{kind} character {bad.describe()} at column {column}; remove it (the file must be plain text)",
            Location(path, bad.line),
        )
    return text


def yaml_error_line(exc: yaml.MarkedYAMLError, text: str) -> int | None:
    """The 1-based line of `text` a YAML error is about, or None when PyYAML gives no mark.

    An unclosed flow collection or quoted scalar (`name: [broken`) is noticed lines later, where
    parsing fails; the line where it opened (PyYAML's context mark) is the one to fix. PyYAML also
    marks an error found at the end of the stream on the line after the last one, which editors
    cannot jump to: the line is clamped to the last line of `text`.
    """
    mark = exc.problem_mark or exc.context_mark
    if exc.context_mark is not None and any(word in (exc.context or "") for word in ("flow", "quoted")):
        mark = exc.context_mark
    if mark is None:
        return None
    return max(1, min(mark.line + 1, len(text.splitlines())))


class _StrictConstruct:
    """Mixin: a scalar its explicit tag cannot hold (`!!int x`, `!!bool maybe`, `!!timestamp x`)
    raises a marked ConstructorError, which loaders report at its line, instead of the plain
    ValueError, KeyError, AttributeError or TypeError PyYAML's constructors raise."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> object:
        try:
            return super().construct_object(node, deep)  # type: ignore[misc]
        except yaml.YAMLError:
            raise
        except (ValueError, KeyError, AttributeError, TypeError):
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value!r} cannot be read as {node.tag.rsplit(':', 1)[-1]}", node.start_mark
            ) from None


class _UniqueKeys:
    """Mixin: a mapping that repeats a key raises a marked ConstructorError at the repeat; PyYAML
    keeps the last value silently, so an edited case would quietly lose the first."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)  # type: ignore[misc]


class SafeLoader(_StrictConstruct, _UniqueKeys, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (the C one where built) whose construction errors carry a line and
    which refuses a repeated key in a mapping."""


def load_yaml_node(node: yaml.Node) -> object:
    """The value of one composed YAML node, constructed safely.

    Raises:
        yaml.MarkedYAMLError: the node holds a value its tag cannot hold (with the node's mark).
    """
    return yaml.load(yaml.serialize(node), Loader=SafeLoader)
