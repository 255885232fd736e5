"""A skill (Agent Skills format): the Skill and BackLink types, the spec's limits, and frames' metadata keys.

A skill file is `---`, a YAML front matter, `---`, then a Markdown body (read and written by
formats/skill_file.py). frames keeps its own data as strings under `metadata` with a `frames-`
prefix (DESIGN §2), so every file also loads in other agent runtimes and passes the reference
validator (`agentskills validate`, PyPI `skills-ref`):

    frames-backlinks   one back-link per line: `<file>#L<start>-L<end> sha256:<hex> <heading path>`
    frames-references  other skills this one relies on, comma-separated names
    frames-tags        free tags, comma-separated
    frames-generated   sha256 of `description + "\\n" + body` as `frames coldstart` wrote them; a
                       mismatch means a person or a rewrite edited the skill since
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError

SKILL_FILE = "SKILL.md"
SKILLS_DIR = "skills"
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
#: Front-matter keys the Agent Skills spec allows, in the order frames writes them.
KEYS = ("name", "description", "license", "compatibility", "allowed-tools", "metadata")

BACKLINKS_KEY = "frames-backlinks"
REFERENCES_KEY = "frames-references"
TAGS_KEY = "frames-tags"
GENERATED_KEY = "frames-generated"

#: Highest line a back-link may name: a policy file holds at most 1,000,000 bytes
#: (formats/policy.MAX_POLICY_BYTES), so no more lines; a larger number is a typo or a hostile edit.
MAX_LINE = 1_000_000
_BACKLINK_RE = re.compile(
    r"^(?P<file>.+?)#L(?P<start>\d+)-L(?P<end>\d+) sha256:(?P<sha>[0-9a-f]{64})(?: (?P<heading>.*))?$"
)


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
            quotes the line), or a span is empty, starts before line 1 or ends after MAX_LINE.
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
        if end > MAX_LINE:
            raise ValueError(
                f"back-link {raw.strip()!r} names line {end}; a policy file has at most {MAX_LINE:,} lines"
            )
        links.append(BackLink(m["file"], m["heading"] or "", start, end, m["sha"]))
    return links


def _split_list(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def text_sha256(text: str) -> str:
    """Hex sha256 of `text` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class SkillSource:
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
    source: SkillSource | None = field(default=None, repr=False, compare=False)

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
