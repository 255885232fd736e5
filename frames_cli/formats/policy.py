"""Policy documents: reading them safely and their heading tree, as sections with line spans and sha256.

A document under `policies/` is Markdown (ATX `#`, setext and `<hN>` headings, fenced code
respected, front matter read as the document's title and metadata, template tags and HTML comments
left out of its reading view) or plain text (no headings). Companion files — LICENSE, NOTICE,
README, SOURCE notes — are not policy and are skipped by name (`is_companion`). Line numbers are
1-based and inclusive, and count `\n` line ends only, as `grep -n` and editors do.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath

from frames_cli.errors import InputError, Location
from frames_cli.formats.markup import front_matter, keep_page_links, plain, reading_view
from frames_cli.formats.text import decode_utf8

#: Largest policy file read, in bytes; a bigger one is refused rather than cut into hundreds of skills.
MAX_POLICY_BYTES = 1_000_000
MARKDOWN_SUFFIXES = (".md", ".markdown")
# Whole names (before the first dot) of files that travel with policies but are not policy; a
# name only starting with one ("Notice of Privacy Practices", "Source Code Policy") is a policy.
_COMPANIONS = frozenset(
    {"license", "licence", "copying", "notice", "readme", "source", "authors", "contributing", "changelog"}
)
# LICENSE-MIT, COPYING_LGPL: a companion word in capitals and a code.
_COMPANION_CODE = re.compile(r"^(?:LICENSE|LICENCE|COPYING|NOTICE)[-_][A-Z0-9][A-Za-z0-9.-]*$")

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NOT_PARAGRAPH = re.compile(r"^\s*([-*+>|]|\d+[.)]\s|#)")


def span_sha256(lines: list[str], start: int, end: int) -> str:
    """Hex sha256 of lines `start`..`end` (1-based, inclusive) joined with "\\n"."""
    return hashlib.sha256("\n".join(lines[start - 1 : end]).encode("utf-8")).hexdigest()


def is_companion(path: PurePath) -> bool:
    """True for files that travel with policies but are not policy: the name before its first dot
    is LICENSE, LICENCE, COPYING, NOTICE, README, SOURCE, AUTHORS, CONTRIBUTING or CHANGELOG (any
    case: `LICENSE`, `README.md`, `LICENSE.tau-bench`), or LICENSE-<code> (`LICENSE-MIT`)."""
    return path.name.split(".", 1)[0].lower() in _COMPANIONS or bool(_COMPANION_CODE.match(path.name))


@dataclass
class Section:
    """A heading and the lines it owns.

    Attributes:
        title: the heading text ("" for the virtual root of a document without a title heading).
        path: heading titles from the document's title down to this one (the virtual root has ()).
        level: 1–6 for headings, 0 for a virtual root.
        start: the heading's line (1 for a virtual root).
        own_end: last line before the first child heading (inclusive; may be < start+1 when the
            heading is directly followed by a child).
        end: last line of the whole subtree (inclusive).
        children: sub-sections in document order.
    """

    title: str
    path: tuple[str, ...]
    level: int
    start: int
    own_end: int
    end: int
    children: list[Section] = field(default_factory=list)


@dataclass
class PolicyDocument:
    """One policy file.

    Attributes:
        file: workspace-relative POSIX path ("policies/airline.md").
        lines: the file's lines without line ends (what back-links hash).
        title: the document title: its only top-level heading when the file starts with one, else
            the front matter's `title`, else the file name without suffix, dashes and underscores
            read as spaces.
        root: the title section, or a virtual level-0 root spanning the whole file; its own lines
            are the document's preamble.
        fenced: line numbers inside fenced code blocks (fences included), never cut apart.
        view: the lines as a reader sees them, one for one with `lines`: front matter, template
            tags, HTML comments and navigation links blanked (`formats.markup.reading_view`);
            headings, skill bodies and coverage read this, never the markup.
        meta: the front matter's mapping ({} without front matter).
        linked: `view` with links to template page tags kept as links to that page
            (`markup.keep_page_links`), for what a link points to; `view` when there are none.
    """

    file: str
    lines: list[str]
    title: str
    root: Section
    fenced: frozenset[int] = frozenset()
    view: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    linked: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.view:
            self.view = list(self.lines)
        if not self.linked:
            self.linked = self.view

    def content_lines(self, start: int, end: int) -> int:
        """Lines in `start`..`end` with text a reader sees (not blank in `view`)."""
        return sum(1 for ln in self.view[start - 1 : end] if ln.strip())

    def sha256(self, start: int, end: int) -> str:
        """sha256 of a span (see `span_sha256`)."""
        return span_sha256(self.lines, start, end)

    def heading_lines(self, section: Section) -> int:
        """Lines the section's heading takes: 0 for a virtual root, 2 for setext (text and
        underline), else 1."""
        if not section.level:
            return 0
        nxt = self.view[section.start] if section.start < len(self.view) else ""
        return 2 if _SETEXT.match(nxt) and not _ATX.match(self.view[section.start - 1]) else 1


def split_lines(text: str) -> list[str]:
    """`text` cut at `\n` only (a `\r` before it dropped), so line numbers are `grep -n`'s; a form
    feed, U+2028 or a lone `\r` stays inside its line (`str.splitlines` would cut there)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def decode_policy(data: bytes, shown: str, *, max_bytes: int = MAX_POLICY_BYTES) -> list[str]:
    """Check and decode a policy file's bytes into lines (no line ends; see `split_lines`).

    Raises:
        InputError: binary data (a NUL byte), not UTF-8, larger than `max_bytes`, or no text at all;
            the location names `shown` and the line where that is known.
    """
    if len(data) > max_bytes:
        raise InputError(
            f"policy file is {len(data)} bytes; the limit is {max_bytes} (split it into several documents)",
            Location(shown),
        )
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError(
            "binary file, not a policy document (policies/ holds Markdown or plain text)",
            Location(shown, data.count(b"\n", 0, nul) + 1),
        )
    text = decode_utf8(data, shown, encoding="utf-8-sig")
    if not text.strip():
        raise InputError("empty policy document", Location(shown))
    return split_lines(text)


def _fenced(lines: list[str], markdown: bool) -> frozenset[int]:
    """1-based numbers of the lines of fenced code blocks, fences included (Markdown only)."""
    if not markdown:
        return frozenset()
    inside: set[int] = set()
    fence: str | None = None
    for no, line in enumerate(lines, 1):
        m = _FENCE.match(line)
        if m:
            inside.add(no)
            fence = (
                None if fence and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) else (fence or m.group(1))
            )
        elif fence:
            inside.add(no)
    return frozenset(inside)


def _headings(lines: list[str], fenced: frozenset[int], markdown: bool) -> list[tuple[int, int, str]]:
    """(line, level, title) of every heading outside fenced code, in order (a setext heading's
    line is its text line, not its underline)."""
    if not markdown:
        return []
    found: list[tuple[int, int, str]] = []
    for i, line in enumerate(lines):
        if i + 1 in fenced:
            continue
        atx = _ATX.match(line)
        if atx:
            found.append((i + 1, len(atx.group(1)), (atx.group(2) or "").strip()))
            continue
        setext = _SETEXT.match(line)
        prev = lines[i - 1] if i else ""
        before = lines[i - 2] if i > 1 else ""
        if setext and prev.strip() and not before.strip() and not _NOT_PARAGRAPH.match(prev):
            found.append((i, 1 if setext.group(1)[0] == "=" else 2, prev.strip()))
    return found


def _title_from_name(path: str) -> str:
    stem = Path(path).stem.replace("_", " ").replace("-", " ").strip()
    return stem[:1].upper() + stem[1:] if stem else "Policy"


def parse_policy(lines: list[str], file: str) -> PolicyDocument:
    """Build the heading tree of a document's lines (see `PolicyDocument`); headings are read in
    the reading view, so markup never becomes a heading."""
    markdown = Path(file).suffix.lower() in MARKDOWN_SUFFIXES
    front = front_matter(lines) if markdown else None
    skip = front.end if front else 0
    fenced = frozenset(no + skip for no in _fenced(lines[skip:], markdown))
    view = reading_view(lines, skip, fenced) if markdown else list(lines)
    linked = (
        reading_view(keep_page_links(lines), skip, fenced) if markdown and any("{%" in line for line in lines) else view
    )
    heads = [(no, lvl, plain(text, markers=False)) for no, lvl, text in _headings(view, fenced, markdown)]
    n = len(lines)
    first_text = next((i for i, ln in enumerate(view, 1) if ln.strip()), 0)
    titled = bool(heads) and heads[0][0] == first_text and all(lvl > heads[0][1] for _, lvl, _ in heads[1:])
    if titled:
        start, level, title = heads[0]
        root = Section(title, (title,), level, start, n, n)
        heads = heads[1:]
    else:
        title = (front.title if front else "") or _title_from_name(file)
        root = Section("", (), 0, 1, n, n)
    stack = [root]
    for start, level, text in heads:
        while len(stack) > 1 and stack[-1].level >= level:
            stack.pop().end = start - 1
        parent = stack[-1]
        if not parent.children:
            parent.own_end = start - 1
        section = Section(text, parent.path + (text,), level, start, n, n)
        parent.children.append(section)
        stack.append(section)
    for section in stack[1:]:
        section.end = n
    _close_own(root)
    return PolicyDocument(file, lines, title, root, fenced, view, front.data if front else {}, linked)


def _close_own(section: Section) -> None:
    if not section.children:
        section.own_end = section.end
    for child in section.children:
        _close_own(child)


def read_policy(path: Path, file: str, *, max_bytes: int = MAX_POLICY_BYTES) -> PolicyDocument:
    """Read and parse one policy file; `file` is its workspace-relative name for messages and back-links.

    Raises:
        InputError: a name holding a line break or a control or invisible character (shown
            escaped), a symlink (or behind one, below the workspace), unreadable, binary, not
            UTF-8, too large or empty (see `decode_policy`).
    """
    from frames_cli.sanitize import unsafe_value
    from frames_cli.files.links import refuse_symlink

    if unsafe_value(file, one_line=True) is not None:
        # The name goes into back-links (one per line), commit messages and every message naming
        # the file: a line break there forges lines, a control character acts on a terminal.
        raise InputError(
            "the file name holds a line break or a control or invisible character; rename the file",
            Location(repr(file)[1:-1]),
        )
    parts = len(Path(file).parts)
    if not Path(file).is_absolute() and len(Path(path).parents) >= parts:
        refuse_symlink(Path(path).parents[parts - 1], Path(path), file)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", Location(file)) from None
    return parse_policy(decode_policy(data, file, max_bytes=max_bytes), file)


def parse_policy_files(files: Mapping[str, bytes]) -> tuple[list[PolicyDocument], list[str]]:
    """Parse the policy documents among `files` (workspace-relative path → bytes, as
    `GitStore.read_files(commit, "policies/")` gives), in path order.

    Companion files (`is_companion`) and hidden files are skipped silently, as `skip_reason` has it.

    Returns:
        (documents, problems): a file that cannot be read as policy (binary, not UTF-8, too large,
        empty; see `decode_policy`) is left out and named in `problems` as `path[:line]: message`.
    """
    docs: list[PolicyDocument] = []
    problems: list[str] = []
    for file, data in sorted(files.items()):
        pure = PurePosixPath(file)
        if is_companion(pure) or any(part.startswith(".") for part in pure.parts):
            continue
        try:
            docs.append(parse_policy(decode_policy(data, file), file))
        except InputError as exc:
            problems.append(str(exc))
    return docs, problems


def skip_reason(path: Path, policies_dir: Path) -> str | None:
    """Why a file under `policies_dir` is not read as policy ("hidden", "companion file"), or None."""
    if any(part.startswith(".") for part in path.relative_to(policies_dir).parts):
        return "hidden"
    return "companion file" if is_companion(path) else None


def all_files(policies_dir: Path) -> list[Path]:
    """Every file under `policies_dir`, recursively, sorted (policies and skipped files alike)."""
    policies_dir = Path(policies_dir)
    return sorted(p for p in policies_dir.rglob("*") if p.is_file()) if policies_dir.is_dir() else []


def policy_files(policies_dir: Path) -> list[Path]:
    """Every policy document under `policies_dir`, recursively, sorted; hidden files and companions skipped."""
    return [p for p in all_files(policies_dir) if skip_reason(p, Path(policies_dir)) is None]


def read_policies(root: Path, policies_dir: Path) -> list[PolicyDocument]:
    """Read every document of `policies_dir`; paths in back-links are relative to workspace `root`.

    Raises:
        InputError: the first bad document (nothing is read past it).
    """
    return [read_policy(p, p.relative_to(root).as_posix()) for p in policy_files(policies_dir)]
