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
