"""Reading the front matter of a SKILL.md written for another
runtime: split it off, and repair YAML that does not parse."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

#: A front-matter fence: `---`, blanks after it allowed (a file opening `--- ` is still front matter).
_FENCE = re.compile(r"^---[ \t]*\r?\n?$")
_KEY_LINE = re.compile(r"^(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(?P<value>.*))?$")
_CHILD_LINE = re.compile(r"^\s+(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(?P<value>.*))?$")


class Unrepairable(Exception):
    """A file whose front matter cannot be read even leniently; the message says why (one line)."""


@dataclass
class Split:
    """A SKILL.md cut into its parts.

    Attributes:
        front: the front-matter text between the fences (None when the file has none).
        after: everything after the closing fence line, byte for byte (the whole text when there
            is no front matter): the body, with the blank lines that separate it.
        fixes: what had to be changed to find the parts (a byte-order mark removed, say).
    """

    front: str | None
    after: str
    fixes: list[str] = field(default_factory=list)


def split_file(text: str) -> Split:
    """Cut `text` into front matter and the rest.

    A file whose first line is not `---` (trailing blanks allowed) has no front matter (all of it
    is body). A front matter that is opened and never closed cannot be told from its body.

    Raises:
        Unrepairable: the front matter is opened with `---` and never closed.
    """
    fixes = []
    if text.startswith("\ufeff"):
        text = text[1:]
        fixes.append("removed the byte-order mark at the start of the file")
    # Line feeds only, as SKILL.md readers split lines (see formats/skill_file.py).
    lines = re.findall(r"[^\n]*\n|[^\n]+\Z", text)
    if not lines or not _FENCE.match(lines[0]):
        return Split(None, text, fixes)
    if lines[0].rstrip("\r\n") != "---":
        # `--- ` opens front matter for the runtimes that wrote it (and for YAML); frames writes `---`.
        fixes.append("removed the blanks after the opening `---`")
    close = next((i for i in range(1, len(lines)) if _FENCE.match(lines[i])), None)
    if close is None:
        raise Unrepairable("the front matter opened with `---` is never closed, so where the body starts is unknown")
    if lines[close].rstrip("\r\n") != "---":
        fixes.append("removed the blanks after the closing `---`")
    return Split("".join(lines[1:close]), "".join(lines[close + 1 :]), fixes)


def read_front(front: str) -> tuple[dict[str, Any], list[str]]:
    """The front matter's keys and values, repairing YAML that does not parse.

    Valid YAML is read as it is (PyYAML's safe loader). Otherwise each top-level entry is read on
    its own: one that parses keeps its value; one that does not is read as plain text (the rest of
    its line, with any lines that continue it), and a block of `key: value` lines under it as a
    mapping of such texts. Tabs used for indentation become spaces; a line at the left margin that
    is not `key:` continues the value above it.

    Returns:
        (key → value in file order, one line per repair made, each naming the file line).

    Raises:
        Unrepairable: the front matter is not a mapping of keys, even read line by line.
    """
    try:
        data = _load(front) if front.strip() else {}
    except yaml.YAMLError as exc:
        return _read_lines(front, _problem(exc))
    if data is None:
        return {}, []
    if not isinstance(data, dict):
        raise Unrepairable(f"the front matter is a YAML {type(data).__name__}, not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}, []


def _load(text: str) -> Any:
    """YAML `text` as Python data whose scalars keep their written text: `version: 1.10` is
    "1.10", not the float 1.1 (the spec wants strings, and a number would lose digits); null is None.

    Raises:
        yaml.YAMLError: the text is not valid YAML.
    """
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    return None if node is None else _node_value(node)


def _node_value(node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return {str(_node_value(k)): _node_value(v) for k, v in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [_node_value(v) for v in node.value]
    if node.tag == "tag:yaml.org,2002:null":
        return None
    return node.value


def _problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    return f"{problem}, line {mark.line + 2}" if mark is not None else problem  # front-matter line 1 is file line 2


def _read_lines(front: str, problem: str) -> tuple[dict[str, Any], list[str]]:
    """Read the front matter entry by entry (see `read_front`); the first fix names the YAML error."""
    fixes = [f"invalid YAML ({problem}): read entry by entry"]
    lines = front.splitlines()
    if any(ln[: len(ln) - len(ln.lstrip())].count("\t") for ln in lines):
        lines = [_untab(ln) for ln in lines]
        fixes.append("tabs used for indentation replaced by spaces")
    entries: list[tuple[int, str, list[str]]] = []  # (file line, key, [first value, continuation lines...])
    for no, line in enumerate(lines, 2):  # front-matter line 1 is file line 2
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _KEY_LINE.match(line)
        if m:
            entries.append((no, m["key"], [m["value"] or ""]))
        elif entries:
            if not line[:1].isspace():
                fixes.append(
                    f"line {no}: joined to the value of `{entries[-1][1]}` (a line at the left margin that is not "
                    "`key:`)"
                )
            entries[-1][2].append(line)
        else:
            raise Unrepairable(f"line {no} of the front matter is neither `key: value` nor part of one")
    out: dict[str, Any] = {}
    for no, key, parts in entries:
        if key in out:
            fixes.append(f"line {no}: duplicate key `{key}`: the first value is kept")
            continue
        out[key], fix = _entry_value(no, key, parts)
        if fix:
            fixes.append(fix)
    return out, fixes


def _untab(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return indent.replace("\t", "  ") + line[len(indent) :]


def _entry_value(no: int, key: str, parts: list[str]) -> tuple[Any, str | None]:
    """The value of one entry, and the fix made to read it (None when it parsed as YAML)."""
    first, rest = parts[0], parts[1:]
    try:
        parsed = _load(f"{key}: {first}\n" + "".join(f"{ln}\n" for ln in rest))
        if isinstance(parsed, dict) and key in parsed:
            return parsed[key], None
    except yaml.YAMLError:
        pass
    if not first.strip() and rest and all(_CHILD_LINE.match(ln) or not ln.strip() for ln in rest):
        children = {m["key"]: _plain(m["value"] or "") for m in (_CHILD_LINE.match(ln) for ln in rest) if m}
        return children, f"line {no}: the entries under `{key}` read as plain text"
    text = " ".join(p.strip() for p in [first, *rest] if p.strip())
    return _plain(text), f"line {no}: `{key}` read as plain text"


def _plain(text: str) -> str:
    """`text` as a plain string: surrounding quotes of a quoted value removed, an unmatched one dropped."""
    text = text.strip()
    if text.startswith("[") and "]" not in text:
        return ", ".join(item.strip() for item in text[1:].split(",") if item.strip())
    for quote in ('"', "'"):
        if text.startswith(quote):
            text = text[1:-1] if len(text) > 1 and text.endswith(quote) else text[1:]
            break
        if text.endswith(quote) and text.count(quote) == 1:
            text = text[:-1]
    return text.strip()
