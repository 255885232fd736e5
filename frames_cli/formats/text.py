"""Reading user text files: UTF-8 decoding and YAML error lines, each reported at the line a person can find."""

from __future__ import annotations

from pathlib import Path

import yaml

from frames_cli.errors import InputError, Location


def decode_utf8(data: bytes, path: Path | str, *, error: type[InputError] = InputError, encoding: str = "utf-8") -> str:
    """`data` decoded as UTF-8 (`encoding="utf-8-sig"` also drops a byte-order mark).

    Raises:
        `error` (an InputError class): `path:line: not UTF-8 text (byte N)`, where line is the
            1-based line holding the first bad byte and N its 0-based offset in the file.
    """
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"not UTF-8 text (byte {exc.start})", Location(path, line)) from None


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


class SafeLoader(_StrictConstruct, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (the C one where built) whose construction errors carry a line."""


def load_yaml_node(node: yaml.Node) -> object:
    """The value of one composed YAML node, constructed safely.

    Raises:
        yaml.MarkedYAMLError: the node holds a value its tag cannot hold (with the node's mark).
    """
    return yaml.load(yaml.serialize(node), Loader=SafeLoader)
