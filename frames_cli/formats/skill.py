"""SKILL.md files (Agent Skills format): parse, check, render byte-for-byte, and the skill set.

A skill file is `---`, a YAML front matter, `---`, then a Markdown body. frames keeps its own data
as strings under `metadata` with a `frames-` prefix (DESIGN §2), so every file also loads in other
agent runtimes and passes the reference validator (`agentskills validate`, PyPI `skills-ref`):

    frames-backlinks   one back-link per line: `<file>#L<start>-L<end> sha256:<hex> <heading path>`
    frames-references  other skills this one relies on, comma-separated names
    frames-tags        free tags, comma-separated
    frames-generated   sha256 of `description + "\\n" + body` as `frames coldstart` wrote them; a
                       mismatch means a person or a rewrite edited the skill since

Rendering keeps the exact bytes of every front-matter key (and every `metadata` entry) whose value
did not change since parsing, and the body is stored verbatim, so an edit shows as a minimal diff.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from frames_cli.errors import InputError, Location
from frames_cli.formats.problems import Problem
from frames_cli.formats.text import decode_utf8, load_yaml_node, yaml_error_line
from frames_cli.secretscan import find_secrets

SKILL_FILE = "SKILL.md"
SKILLS_DIR = "skills"
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
#: Front-matter keys the Agent Skills spec allows, in the order frames writes them.
KEYS = ("name", "description", "license", "compatibility", "allowed-tools", "metadata")
PROTECTED_OPEN = "<!-- frames:protected -->"
PROTECTED_CLOSE = "<!-- /frames:protected -->"

BACKLINKS_KEY = "frames-backlinks"
REFERENCES_KEY = "frames-references"
TAGS_KEY = "frames-tags"
GENERATED_KEY = "frames-generated"

_BACKLINK_RE = re.compile(r"^(?P<file>.+?)#L(?P<start>\d+)-L(?P<end>\d+) sha256:(?P<sha>[0-9a-f]{64})(?: (?P<heading>.*))?$")


@dataclass(frozen=True)
class BackLink:
    """One span of policy text a skill came from.

    Attributes:
        file: workspace-relative POSIX path, e.g. "policies/airline.md".
        heading: heading path, " > "-joined ("Airline Agent Policy > Cancel flight"); "" for none.
        start, end: 1-based inclusive line span in that file.
        sha256: hex sha256 of the span's text (its lines joined with "\\n", no line ends kept).
    """

    file: str
    heading: str
    start: int
    end: int
    sha256: str

    def encode(self) -> str:
        """The one-line form stored in `frames-backlinks`."""
        line = f"{self.file}#L{self.start}-L{self.end} sha256:{self.sha256}"
        return f"{line} {self.heading}" if self.heading else line


def encode_backlinks(links: list[BackLink]) -> str:
    """The `frames-backlinks` value: one encoded back-link per line."""
    return "\n".join(link.encode() for link in links)


def decode_backlinks(value: str) -> list[BackLink]:
    """Parse a `frames-backlinks` value.

    Raises:
        ValueError: a line is not `<file>#L<start>-L<end> sha256:<64 hex> [heading]` (the message
            quotes the line), or a span is empty or starts before line 1.
    """
    links = []
    for raw in value.splitlines():
        if not raw.strip():
            continue
        m = _BACKLINK_RE.match(raw.strip())
        if not m:
            raise ValueError(f"back-link {raw.strip()!r} is not `<file>#L<start>-L<end> sha256:<64 hex> <heading>`")
        start, end = int(m["start"]), int(m["end"])
        if start < 1 or end < start:
            raise ValueError(f"back-link {raw.strip()!r} has an empty line span")
        links.append(BackLink(m["file"], m["heading"] or "", start, end, m["sha"]))
    return links


def _split_list(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def text_sha256(text: str) -> str:
    """Hex sha256 of `text` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class _Source:
    """What a parsed file looked like: raw front-matter pieces and the values they held.

    `keys` maps each top-level key to (raw lines, value at parse time); `meta` does the same for each
    `metadata` entry when `metadata` was a block mapping. `head` is the `metadata:` line itself.
    `key_lines` maps each top-level key to the 1-based file line it starts on, for messages.
    """

    open_fence: str
    close_fence: str
    keys: dict[str, tuple[str, Any]]
    meta: dict[str, tuple[str, str]] | None
    meta_head: str
    body_sep: str
    body_line: int
    key_lines: dict[str, int] = field(default_factory=dict)


@dataclass
class Skill:
    """One skill: the front matter as fields, and the Markdown body.

    Attributes:
        name: 1–64 chars of `[a-z0-9-]`, equal to its folder name.
        description: what the skill does and when to use it (1–1024 chars, no `<` or `>`).
        body: the Markdown after the front matter (its leading blank lines are kept apart, so a
            parsed body starts at its first non-blank line).
        metadata: the whole `metadata` map (string → string), `frames-*` keys included.
        license, compatibility, allowed_tools: optional spec fields.
        path: the SKILL.md it was read from, if any.
        source: raw pieces of the parsed file, used by `render_skill` to keep unedited bytes.
    """

    name: str
    description: str
    body: str
    metadata: dict[str, str] = field(default_factory=dict)
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = None
    path: Path | None = None
    source: _Source | None = field(default=None, repr=False, compare=False)

    @property
    def backlinks(self) -> list[BackLink]:
        """Back-links to policy text (ValueError when `frames-backlinks` is malformed)."""
        return decode_backlinks(self.metadata.get(BACKLINKS_KEY, ""))

    @backlinks.setter
    def backlinks(self, links: list[BackLink]) -> None:
        """Store `links` encoded in `frames-backlinks`; an empty list removes the key."""
        self._set_meta(BACKLINKS_KEY, encode_backlinks(links))

    @property
    def references(self) -> list[str]:
        """Names of other skills this one refers to."""
        return _split_list(self.metadata.get(REFERENCES_KEY))

    @references.setter
    def references(self, names: list[str]) -> None:
        """Store `names` comma-separated in the metadata; an empty list removes the key."""
        self._set_meta(REFERENCES_KEY, ", ".join(names))

    @property
    def tags(self) -> list[str]:
        """Free tags (for example the policy a skill came from)."""
        return _split_list(self.metadata.get(TAGS_KEY))

    @tags.setter
    def tags(self, tags: list[str]) -> None:
        """Store `tags` comma-separated in the metadata; an empty list removes the key."""
        self._set_meta(TAGS_KEY, ", ".join(tags))

    def _set_meta(self, key: str, value: str) -> None:
        if value:
            self.metadata[key] = value
        else:
            self.metadata.pop(key, None)

    def content_sha256(self) -> str:
        """sha256 of `description + "\\n" + body`: what `frames-generated` records."""
        return text_sha256(self.description + "\n" + self.body)

    @property
    def edited(self) -> bool:
        """True when the skill changed since `frames coldstart` wrote it, or coldstart did not write it."""
        return self.metadata.get(GENERATED_KEY) != self.content_sha256()

    def summary(self) -> str:
        """`name — description` on one line."""
        return f"{self.name} — {' '.join(self.description.split())}"

    def file_path(self) -> str:
        """Workspace-relative POSIX path of this skill's file: `skills/<name>/SKILL.md`.

        Raises:
            InputError: the name is not a valid skill name (so it cannot escape `skills/`).
        """
        if not NAME_RE.match(self.name) or len(self.name) > MAX_NAME:
            raise InputError(f"invalid skill name {self.name!r}: use 1-64 of a-z, 0-9 and single hyphens")
        return f"{SKILLS_DIR}/{self.name}/{SKILL_FILE}"


# --- parsing --------------------------------------------------------------------------------------


def _key_segments(lines: list[str], node: yaml.MappingNode, first_line: int, last_line: int) -> list[tuple[str, yaml.Node, yaml.Node, str]]:
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
    if text.startswith("\ufeff"):
        raise InputError("file starts with a byte-order mark; save it as UTF-8 without BOM", Location(path, 1))
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        raise InputError("SKILL.md must start with a YAML front matter line `---`", Location(path, 1))
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---"), None)
    if close is None:
        raise InputError("front matter is not closed with a `---` line", Location(path, 1))
    fm_lines = lines[1:close]
    fm_text = "".join(fm_lines)
    if "---" in fm_text:
        # The reference validator splits the file at the first `---` after the opening fence.
        at = next(i for i, ln in enumerate(fm_lines) if "---" in ln)
        raise InputError("front matter must not contain `---`", Location(path, at + 2))
    try:
        node = _compose(fm_text)
    except yaml.MarkedYAMLError as exc:
        line = yaml_error_line(exc, fm_text)
        raise InputError(f"invalid YAML in front matter: {exc.problem or exc}", Location(path, line + 1 if line else 1)) from None
    if not isinstance(node, yaml.MappingNode):
        raise InputError("front matter must be a mapping of keys to values", Location(path, 2 if node else 1))
    _reject_non_strict(fm_text, path, 1)

    values: dict[str, Any] = {}
    raw_keys: dict[str, tuple[str, Any]] = {}
    key_lines: dict[str, int] = {}
    meta_raw: dict[str, tuple[str, str]] | None = None
    meta_head = ""
    for key, knode, vnode, raw in _key_segments(fm_lines, node, 0, len(fm_lines)):
        loc = Location(path, knode.start_mark.line + 2)
        if key not in KEYS:
            raise InputError(f"unknown front-matter key `{key}` (allowed: {', '.join(KEYS)})", loc)
        if key in values:
            raise InputError(f"duplicate front-matter key `{key}`", loc)
        if key == "metadata":
            values[key], meta_raw, meta_head = _parse_metadata(fm_lines, knode, vnode, path)
        else:
            values[key] = _scalar_str(vnode, key, Location(path, vnode.start_mark.line + 2))
        raw_keys[key] = (raw, values[key] if key != "metadata" else dict(values[key]))
        key_lines[key] = loc.line
    for required in ("name", "description"):
        if required not in values:
            raise InputError(f"missing required front-matter key `{required}`", Location(path, 1))

    body_start = close + 1
    while body_start < len(lines) and not lines[body_start].strip():
        body_start += 1
    source = _Source(lines[0], lines[close], raw_keys, meta_raw, meta_head, "".join(lines[close + 1 : body_start]), body_start + 1, key_lines)
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


def _parse_metadata(lines: list[str], knode: yaml.Node, vnode: yaml.Node, path: Path) -> tuple[dict[str, str], dict[str, tuple[str, str]] | None, str]:
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
        raise InputError(f"SKILL.md is {len(data)} bytes; the limit is {MAX_SKILL_BYTES} (skills should stay near 5,000 tokens)", Location(path))
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
    for key, value in (("license", skill.license), ("compatibility", skill.compatibility), ("allowed-tools", skill.allowed_tools)):
        if value is not None:
            values[key] = value
    if skill.metadata:
        values["metadata"] = dict(skill.metadata)
    return values


def _render_metadata(meta: dict[str, str], src: _Source | None) -> str:
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


# --- protected regions ----------------------------------------------------------------------------


#: Anything that reads as a marker, in any case or spacing; only the exact forms above are markers.
_MARKER_LIKE = re.compile(r"frames\s*:\s*protected", re.IGNORECASE)


def scan_protected(body: str) -> tuple[list[str], list[tuple[int, str]]]:
    """Find protected regions in a body: the one definition of the marker syntax (validate,
    coldstart and the rewrite guard all use it). A marker is `PROTECTED_OPEN` or `PROTECTED_CLOSE`
    alone on its line (surrounding spaces allowed); any other line naming `frames:protected` (no
    spaces, upper case, inline, extra words) is a problem.

    Returns:
        (regions, problems): the text between each pair of markers, in order, and (1-based body
        line, message) for each nesting, unclosed, stray or malformed marker.
    """
    regions: list[str] = []
    problems: list[tuple[int, str]] = []
    open_line: int | None = None
    current: list[str] = []
    for no, line in enumerate(body.splitlines(keepends=True), 1):
        marker = line.strip()
        if marker not in (PROTECTED_OPEN, PROTECTED_CLOSE) and _MARKER_LIKE.search(line):
            # A near miss (`<!--frames:protected-->`, upper case, an inline region) would protect
            # nothing while its author believes it does: it is an error, never ignored.
            problems.append((no, f"not a protected-region marker: write `{PROTECTED_OPEN}` and `{PROTECTED_CLOSE}` "
                                 "exactly, each alone on its line (inline regions are not supported)"))
            continue
        if marker == PROTECTED_OPEN:
            if open_line is not None:
                problems.append((no, f"protected region opened again before the one at body line {open_line} was closed"))
                continue
            open_line, current = no, []
        elif marker == PROTECTED_CLOSE:
            if open_line is None:
                problems.append((no, "`<!-- /frames:protected -->` without an opening marker"))
                continue
            regions.append("".join(current))
            open_line = None
        elif open_line is not None:
            current.append(line)
    if open_line is not None:
        problems.append((open_line, "protected region is never closed"))
    return regions, problems


def protected_regions(body: str) -> list[str]:
    """Texts of the protected regions of `body`, in order (markers excluded).

    Raises:
        ValueError: the markers are not well formed (the message gives the body line).
    """
    regions, problems = scan_protected(body)
    if problems:
        line, msg = problems[0]
        raise ValueError(f"body line {line}: {msg}")
    return regions


# --- checks ---------------------------------------------------------------------------------------


def name_problems(name: str) -> list[str]:
    """Spec rules for a skill name; empty when `name` is valid."""
    if not name:
        return ["`name` must not be empty"]
    out = []
    if len(name) > MAX_NAME:
        out.append(f"name is {len(name)} characters; at most {MAX_NAME} are allowed")
    if not NAME_RE.match(name):
        out.append(f"name {name!r} must be lowercase letters, digits and single hyphens (no leading or trailing hyphen)")
    return out


def _key_line(skill: Skill, key: str) -> int:
    """File line of a front-matter key, when the skill was parsed from a file (else 1)."""
    return skill.source.key_lines.get(key, 1) if skill.source else 1


def _body_line(skill: Skill, body_line: int) -> int | None:
    """File line of a body line, when the skill was parsed from a file."""
    return skill.source.body_line + body_line - 1 if skill.source else None


def skill_problems(skill: Skill, *, folder: str | None = None, max_body_lines: int = 500) -> list[Problem]:
    """All spec and lint problems of one skill (empty when it is fine).

    Errors: invalid name, name differing from `folder`, empty or too long description, `<`/`>` in
    the description, compatibility over 500 chars, malformed protected regions, malformed
    `frames-backlinks`, a credential in the body or description (`secretscan`). Warnings: body longer than `max_body_lines` lines.
    """
    path = skill.path or Path(f"{SKILLS_DIR}/{skill.name}/{SKILL_FILE}")
    here = Location(path, 1)
    at_name, at_description = Location(path, _key_line(skill, "name")), Location(path, _key_line(skill, "description"))
    out = [Problem(at_name, msg) for msg in name_problems(skill.name)]
    if folder is not None and folder != skill.name:
        out.append(Problem(at_name, f"name {skill.name!r} differs from its folder name {folder!r}"))
    if not skill.description.strip():
        out.append(Problem(at_description, "`description` must not be empty"))
    if len(skill.description) > MAX_DESCRIPTION:
        out.append(Problem(at_description, f"description is {len(skill.description)} characters; at most {MAX_DESCRIPTION} are allowed"))
    if "<" in skill.description or ">" in skill.description:
        out.append(Problem(at_description, "description must not contain `<` or `>`"))
    if skill.compatibility is not None and len(skill.compatibility) > MAX_COMPATIBILITY:
        out.append(Problem(Location(path, _key_line(skill, "compatibility")), f"compatibility is {len(skill.compatibility)} characters; at most {MAX_COMPATIBILITY} are allowed"))
    for line, msg in scan_protected(skill.body)[1]:
        out.append(Problem(Location(path, _body_line(skill, line)), msg))
    try:
        skill.backlinks
    except ValueError as exc:
        out.append(Problem(Location(path, _key_line(skill, "metadata")), f"metadata `{BACKLINKS_KEY}`: {exc}"))
    for hit in find_secrets(skill.body):
        # Skills are committed, pushed and pasted into prompts: a credential must never be one's text.
        out.append(Problem(Location(path, _body_line(skill, hit.line)), f"holds a credential ({hit.kind}); remove it, skills are committed and shown to models"))
    for hit in find_secrets(skill.description):
        out.append(Problem(at_description, f"description holds a credential ({hit.kind}); remove it"))
    n_lines = len(skill.body.splitlines())
    if n_lines > max_body_lines:
        out.append(Problem(here, f"body has {n_lines} lines; keep it under {max_body_lines} (cost is an objective)", "warning"))
    return out


# --- the skill set --------------------------------------------------------------------------------


class SkillSet(Mapping[str, Skill]):
    """An ordered, read-only map name → Skill (ordered by name); `with_skill`/`without` make new sets."""

    def __init__(self, skills: list[Skill] | None = None):
        self._skills: dict[str, Skill] = {}
        for skill in sorted(skills or [], key=lambda s: s.name):
            if skill.name in self._skills:
                raise InputError(f"duplicate skill name {skill.name!r}", Location(skill.path or skill.name))
            self._skills[skill.name] = skill

    def __getitem__(self, name: str) -> Skill:
        return self._skills[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._skills)

    def __len__(self) -> int:
        return len(self._skills)

    def with_skill(self, skill: Skill) -> SkillSet:
        """A new set with `skill` added or replacing the one of the same name."""
        return SkillSet([s for s in self._skills.values() if s.name != skill.name] + [skill])

    def without(self, name: str) -> SkillSet:
        """A new set without the skill `name` (KeyError if absent)."""
        if name not in self._skills:
            raise KeyError(name)
        return SkillSet([s for s in self._skills.values() if s.name != name])

    @classmethod
    def check_files(cls, files: Mapping[str, bytes], *, max_body_lines: int = 500, base: Path | None = None) -> tuple[SkillSet, list[Problem]]:
        """Parse and check skills from `{path: bytes}`; collect every problem instead of stopping.

        Paths are POSIX, `skills/<folder>/SKILL.md` or `<folder>/SKILL.md`; other files (a skill's
        `references/` or `scripts/`) are ignored. `base` is prefixed to paths in messages.

        Returns:
            (the skills that parsed without errors, all problems in path order). Duplicate names
            are errors on every file that uses the name.
        """
        problems: list[Problem] = []
        parsed: list[tuple[Skill, bool]] = []
        for rel in sorted(files):
            parts = rel.removeprefix(f"{SKILLS_DIR}/").split("/")
            if len(parts) != 2 or parts[1] != SKILL_FILE:
                continue
            shown = (base / rel) if base else Path(rel)
            if ".." in parts or parts[0].startswith("."):
                problems.append(Problem(Location(shown), "skill folders must be plain names inside skills/"))
                continue
            try:
                skill = parse_skill_bytes(files[rel], shown)
            except InputError as exc:
                problems.append(Problem(exc.location or Location(shown), exc.message))
                continue
            found = skill_problems(skill, folder=parts[0], max_body_lines=max_body_lines)
            problems.extend(found)
            parsed.append((skill, any(p.severity == "error" for p in found)))
        by_name: dict[str, list[Skill]] = {}
        for skill, _ in parsed:
            by_name.setdefault(skill.name, []).append(skill)
        for name, group in by_name.items():
            if len(group) > 1:
                users = ", ".join(str(s.path) for s in group)
                problems.extend(Problem(Location(s.path, _key_line(s, "name")), f"duplicate skill name {name!r} (used by {users})") for s in group)
        keep = [skill for skill, bad in parsed if not bad and len(by_name[skill.name]) == 1]
        problems.sort(key=lambda p: (str(p.location.path), p.location.line or 0))
        return cls(keep), problems

    @classmethod
    def load_valid(cls, files: Mapping[str, bytes], *, base: Path | None = None, max_body_lines: int = 500) -> tuple[SkillSet, list[Problem]]:
        """The skills of `files` that load, and the first error of each one that does not.

        For commands that work on a skill set (eval, evolve, ingest): one bad skill leaves that
        skill out, not the whole set; the caller must say which were left out (`left_out_message`).

        Returns:
            (the valid skills, one error Problem per skill file left out, in path order).
        """
        skills, problems = cls.check_files(files, base=base, max_body_lines=max_body_lines)
        return skills, left_out(problems)

    @classmethod
    def from_files(cls, files: Mapping[str, bytes], *, base: Path | None = None) -> SkillSet:
        """Load a set from `{path: bytes}` (see `check_files`), e.g. a tree read from git.

        Raises:
            InputError: the first error found, as `path:line: message`.
        """
        skills, problems = cls.check_files(files, base=base)
        errors = [p for p in problems if p.severity == "error"]
        if errors:
            raise InputError(errors[0].message, errors[0].location)
        return skills

    @staticmethod
    def read_dir(skills_dir: Path) -> dict[str, bytes]:
        """`{"skills/<folder>/SKILL.md": bytes}` for every skill folder under `skills_dir`."""
        skills_dir = Path(skills_dir)
        if not skills_dir.is_dir():
            return {}
        # A symlinked folder or SKILL.md is never read (`frames validate` names one leading outside).
        return {
            f"{SKILLS_DIR}/{p.parent.name}/{SKILL_FILE}": p.read_bytes()
            for p in sorted(skills_dir.glob(f"*/{SKILL_FILE}"))
            if p.is_file() and not p.is_symlink() and not p.parent.is_symlink()
        }

    @classmethod
    def from_dir(cls, skills_dir: Path) -> SkillSet:
        """Load every `skills_dir/<name>/SKILL.md` (InputError on the first error)."""
        skills_dir = Path(skills_dir)
        return cls.from_files(cls.read_dir(skills_dir), base=skills_dir.parent)

    def to_files(self) -> dict[str, bytes]:
        """`{"skills/<name>/SKILL.md": UTF-8 bytes}` for every skill (see `render_skill`)."""
        return {skill.file_path(): render_skill(skill).encode("utf-8") for skill in self._skills.values()}


def left_out(problems: Iterable[Problem]) -> list[Problem]:
    """The first error of each file among `problems` (warnings ignored), in the order given."""
    seen: dict[str, Problem] = {}
    for problem in problems:
        if problem.severity == "error":
            seen.setdefault(str(problem.location.path), problem)
    return list(seen.values())


def left_out_message(dropped: list[Problem], loaded: int) -> str:
    """One line for people: how many skills were left out and why, each as `path:line: message`.

    Empty when nothing was left out. Points to `frames validate` (every problem) and `frames adopt`
    (repairs what can be repaired).
    """
    if not dropped:
        return ""
    reasons = "; ".join(f"{p.location}: {p.message}" for p in dropped)
    return (f"warning: left out {len(dropped)} skill(s) that do not load, using the other {loaded} "
            f"(`frames validate` lists every problem, `frames adopt skills` repairs what it can): {reasons}")
