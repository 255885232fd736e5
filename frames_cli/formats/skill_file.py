"""SKILL.md text ↔ Skill: parse (structure only, errors with path:line) and render byte-for-byte.

Rendering keeps the exact bytes of every front-matter key (and every `metadata` entry) whose value
did not change since parsing, and the body is stored verbatim, so an edit shows as a minimal diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from frames_cli.errors import InputError, Location
from frames_cli.formats.skill import KEYS, Skill, SkillSource
from frames_cli.formats.text import decode_utf8, load_yaml_node, yaml_error_line

# --- parsing --------------------------------------------------------------------------------------

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_OTHER_BREAKS = ("\u2028", "\u2029", "\x85")


def _key_segments(
    lines: list[str], node: yaml.MappingNode, first_line: int, last_line: int
) -> list[tuple[str, yaml.Node, yaml.Node, str]]:
    """Split the lines of a block mapping into one raw segment per key.

    `lines` are the document's lines; `first_line`..`last_line` (0-based, exclusive end) bound the
    mapping. A segment runs from its key's line to the line before the next key, so comments and
    blank lines travel with the key above them.
    """
    starts = [k.start_mark.line for k, _ in node.value]
    out = []
    for i, (k, v) in enumerate(node.value):
        begin = first_line if i == 0 else starts[i]
        end = starts[i + 1] if i + 1 < len(starts) else last_line
        out.append((k.value, k, v, "".join(lines[begin:end])))
    return out


def _scalar_str(node: yaml.Node, key: str, loc: Location) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise InputError(f"`{key}` must be a string", loc)
    if not node.style and node.tag != "tag:yaml.org,2002:str":
        # A plain `yes`, `123` or `null` is a bool, number or null to YAML: the spec wants strings.
        try:
            value = load_yaml_node(node)
        except yaml.MarkedYAMLError as exc:
            raise InputError(f"`{key}`: {exc.problem}", loc) from None
        if not isinstance(value, str):
            raise InputError(f"`{key}` must be a string, got {value!r} (quote it)", loc)
    return node.value


_STRICT_TOKENS = {
    yaml.FlowMappingStartToken: "flow style ({...} or [...]) is not allowed in front matter; use block style",
    yaml.FlowSequenceStartToken: "flow style ({...} or [...]) is not allowed in front matter; use block style",
    yaml.AnchorToken: "YAML anchors and aliases are not allowed in front matter",
    yaml.AliasToken: "YAML anchors and aliases are not allowed in front matter",
    yaml.TagToken: "YAML tags (`!!str`, `!x`) are not allowed in front matter",
}


def _reject_non_strict(text: str, path: Path, offset: int) -> None:
    """strictyaml, which the reference validator uses, refuses flow collections, anchors, aliases
    and tags: find the first one so the user hears it from us, with its line."""
    for token in yaml.scan(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        message = _STRICT_TOKENS.get(type(token))
        if message:
            raise InputError(message, Location(path, token.start_mark.line + 1 + offset))


def _compose(text: str) -> yaml.Node | None:
    """The YAML node tree of `text`: libyaml when present (about 10x faster), and the pure-Python
    parser to word an error, so messages are the same on every machine."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.compose(text, Loader=fast)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


def parse_skill(text: str, path: Path) -> Skill:
    """Parse the text of a SKILL.md.

    Checks the structure only (front matter present and closed, YAML valid, allowed keys, string
    values, `name` and `description` present); name rules and lints are `skill_problems`.

    Raises:
        InputError: `path:line: message` naming the first structural problem.
    """
    path = Path(path)
    lines, close = _split_front_matter(text, path)
    fm_lines = lines[1:close]
    keys = _read_keys(fm_lines, _front_matter_node(fm_lines, path), path)
    body_start = close + 1
    while body_start < len(lines) and not lines[body_start].strip():
        body_start += 1
    source = SkillSource(
        lines[0], lines[close], keys.raw, keys.meta_raw, keys.meta_head, "".join(lines[close + 1 : body_start]),
        body_start + 1, keys.lines,
    )
    values = keys.values
    return Skill(
        name=values["name"],
        description=values["description"],
        body="".join(lines[body_start:]),
        metadata=values.get("metadata", {}),
        license=values.get("license"),
        compatibility=values.get("compatibility"),
        allowed_tools=values.get("allowed-tools"),
        path=path,
        source=source,
    )


def _split_front_matter(text: str, path: Path) -> tuple[list[str], int]:
    """The file's lines (each with its line end) and the index of the `---` line closing the front matter."""
    if text.startswith("\ufeff"):
        raise InputError("file starts with a byte-order mark; save it as UTF-8 without BOM", Location(path, 1))
    # Lines end at line feeds only, as other readers of SKILL.md split them: `splitlines` also
    # breaks at U+2028, U+0085 and lone CRs, where a `---` would close the front matter for frames
    # and for no one else.
    lines = _LINE.findall(text)
    if not lines or lines[0].rstrip("\r\n") != "---":
        raise InputError("SKILL.md must start with a YAML front matter line `---`", Location(path, 1))
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---"), None)
    if close is None:
        raise InputError("front matter is not closed with a `---` line", Location(path, 1))
    return lines, close


def _front_matter_node(fm_lines: list[str], path: Path) -> yaml.MappingNode:
    """The front matter's lines composed as a YAML mapping, refused where YAML readers would disagree on it."""
    fm_text = "".join(fm_lines)
    other_break = next(
        (i for i, ln in enumerate(fm_lines) if any(c in ln for c in _OTHER_BREAKS) or "\r" in ln.rstrip("\r\n")), None
    )
    if other_break is not None:
        # YAML 1.1 (PyYAML) breaks lines at them, YAML 1.2 and strictyaml do not: one file, two readings.
        raise InputError(
            "front matter holds a line separator (U+2028, U+2029, U+0085 or a lone CR), which YAML readers disagree "
            "on; use line feeds",
            Location(path, other_break + 2),
        )
    if "---" in fm_text:
        # The reference validator splits the file at the first `---` after the opening fence.
        at = next(i for i, ln in enumerate(fm_lines) if "---" in ln)
        raise InputError("front matter must not contain `---`", Location(path, at + 2))
    try:
        node = _compose(fm_text)
    except yaml.MarkedYAMLError as exc:
        line = yaml_error_line(exc, fm_text)
        raise InputError(
            f"invalid YAML in front matter: {exc.problem or exc}", Location(path, line + 1 if line else 1)
        ) from None
    if not isinstance(node, yaml.MappingNode):
        raise InputError("front matter must be a mapping of keys to values", Location(path, 2 if node else 1))
    _reject_non_strict(fm_text, path, 1)
    return node


@dataclass
class _Keys:
    """The front matter's keys as read: values, each key's text and file line, and the metadata's."""

    values: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, tuple[str, Any]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    meta_raw: dict[str, tuple[str, str]] | None = None
    meta_head: str = ""


def _read_keys(fm_lines: list[str], node: yaml.MappingNode, path: Path) -> _Keys:
    """Every key of the front matter: only known keys, each once, `name` and `description` present."""
    keys = _Keys()
    values = keys.values
    for key, knode, vnode, raw in _key_segments(fm_lines, node, 0, len(fm_lines)):
        line = knode.start_mark.line + 2
        loc = Location(path, line)
        if key not in KEYS:
            raise InputError(f"unknown front-matter key `{key}` (allowed: {', '.join(KEYS)})", loc)
        if key in values:
            raise InputError(f"duplicate front-matter key `{key}`", loc)
        if key == "metadata":
            values[key], keys.meta_raw, keys.meta_head = _parse_metadata(fm_lines, knode, vnode, path)
        else:
            values[key] = _scalar_str(vnode, key, Location(path, vnode.start_mark.line + 2))
        keys.raw[key] = (raw, values[key] if key != "metadata" else dict(values[key]))
        keys.lines[key] = line
    for required in ("name", "description"):
        if required not in values:
            raise InputError(f"missing required front-matter key `{required}`", Location(path, 1))
    return keys


def _parse_metadata(
    lines: list[str], knode: yaml.Node, vnode: yaml.Node, path: Path
) -> tuple[dict[str, str], dict[str, tuple[str, str]] | None, str]:
    loc = Location(path, vnode.start_mark.line + 2)
    if isinstance(vnode, yaml.ScalarNode) and vnode.value == "" and not vnode.style:
        return {}, None, ""
    if not isinstance(vnode, yaml.MappingNode):
        raise InputError("`metadata` must be a mapping of strings to strings", loc)
    meta: dict[str, str] = {}
    raw: dict[str, tuple[str, str]] = {}
    first = knode.start_mark.line + 1
    end = vnode.end_mark.line + (1 if vnode.end_mark.column else 0)
    for key, kn, vn, seg in _key_segments(lines, vnode, first, end):
        kloc = Location(path, kn.start_mark.line + 2)
        if not isinstance(kn, yaml.ScalarNode):
            raise InputError("`metadata` keys must be strings", kloc)
        if key in meta:
            raise InputError(f"duplicate metadata key `{key}`", kloc)
        meta[key] = _scalar_str(vn, f"metadata.{key}", Location(path, vn.start_mark.line + 2))
        raw[key] = (seg, meta[key])
    return meta, raw, "".join(lines[knode.start_mark.line : first])


#: Largest SKILL.md read: 40× the Agent Skills advice of about 5,000 tokens, so a pasted log or a
#: runaway rewrite (10 MB cost 219.5 M tokens in one round, issue 15) is refused, not paid for.
MAX_SKILL_BYTES = 800_000


def parse_skill_bytes(data: bytes, path: Path) -> Skill:
    """Decode UTF-8 `data` and parse it (InputError naming the line of a bad byte, or a file over
    MAX_SKILL_BYTES)."""
    if len(data) > MAX_SKILL_BYTES:
        raise InputError(
            f"SKILL.md is {len(data)} bytes; the limit is {MAX_SKILL_BYTES} (skills should stay near 5,000 tokens)",
            Location(path),
        )
    return parse_skill(decode_utf8(data, path), path)



# --- rendering ------------------------------------------------------------------------------------


def _yaml_value(value: str, indent: str) -> str:
    """`value` as a YAML scalar strictyaml reads back as the same string."""
    if "\n" in value and all(ln == ln.strip() and ln for ln in value.split("\n")):
        pad = indent + "  "
        return "|-\n" + "".join(f"{pad}{ln}\n" for ln in value.split("\n"))
    # safe_dump quotes whatever YAML 1.1 would read as another type (yes, 1.5, ~), so its plain
    # scalars read back as the same string in PyYAML and in strictyaml alike.
    dumped = yaml.safe_dump(value, default_flow_style=False, width=1 << 30, allow_unicode=True)
    return dumped.removesuffix("\n").removesuffix("\n...") + "\n"


def _render_key(key: str, value: str, indent: str = "") -> str:
    return f"{indent}{key}: {_yaml_value(value, indent)}"


def _front_values(skill: Skill) -> dict[str, Any]:
    values: dict[str, Any] = {"name": skill.name, "description": skill.description}
    for key, value in (
        ("license", skill.license), ("compatibility", skill.compatibility), ("allowed-tools", skill.allowed_tools),
    ):
        if value is not None:
            values[key] = value
    if skill.metadata:
        values["metadata"] = dict(skill.metadata)
    return values


def _render_metadata(meta: dict[str, str], src: SkillSource | None) -> str:
    old = (src.meta or {}) if src else {}
    out = [src.meta_head if src and src.meta_head else "metadata:\n"]
    order = [k for k in old if k in meta] + [k for k in meta if k not in old]
    for key in order:
        raw, was = old.get(key, (None, None))
        out.append(raw if raw is not None and was == meta[key] else _render_key(key, meta[key], "  "))
    return "".join(out)


def render_skill(skill: Skill) -> str:
    """The SKILL.md text of `skill`.

    For a parsed skill, every front-matter key and `metadata` entry whose value is unchanged keeps
    its original bytes (comments and quoting included), changed ones are re-rendered in place, new
    ones are appended; the body is written verbatim. `render_skill(parse_skill(t, p)) == t` for any
    `t` that parses.
    """
    src = skill.source
    values = _front_values(skill)
    old_keys = src.keys if src else {}
    order = [k for k in old_keys if k in values] + [k for k in KEYS if k in values and k not in old_keys]
    parts = [src.open_fence if src else "---\n"]
    for key in order:
        raw, was = old_keys.get(key, (None, None))
        if raw is not None and was == values[key]:
            parts.append(raw)
        elif key == "metadata":
            parts.append(_render_metadata(values[key], src))
        else:
            parts.append(_render_key(key, values[key]))
    parts.append(src.close_fence if src else "---\n")
    parts.append(src.body_sep if src else "\n")
    parts.append(skill.body)
    return "".join(parts)

