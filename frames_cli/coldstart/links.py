"""Links in policy text: where they point, and which skills a skill refers to through them.

A policy's links are of three kinds: to a place in the same page (`[text](#anchor)`), to another
page of the same site (`[text]({% page "/travel-guide-faq/#book-lodging" %})` in a Jekyll site,
`[text](other.md#anchor)` in a folder of Markdown) and to the outside (`https://...`). The reading
view (`PolicyDocument.view`) keeps the first and the last as written and reads the second as its
text, because its target was a template tag; `PolicyDocument.linked` keeps that target too, so a
link to another policy document can become a `frames-references` entry when that document is a skill.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from frames_cli.formats.markup import plain
from frames_cli.formats.policy import PolicyDocument, Section

if TYPE_CHECKING:
    from frames_cli.coldstart.sectioning import Chunk

# `[text](target)` with the target kept; images are not links.
_LINK = re.compile(r"(?<!!)\[([^\]\[]*)\]\(([^)\s]*)\)")
#: A line that is only a link to a place in the same page: a table of contents entry, or a
#: "[_Having Trouble_](#having-trouble)" jump.
IN_PAGE_LINE = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+)?(?:\*\*\[!\]\*\*\s*)?\[[^\]]*\]\(#[^)]*\)[\s.;,]*$")
_IN_PAGE = re.compile(r"(?<!!)\[([^\]\[]*)\]\(#[^)]*\)")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def in_page_as_text(line: str) -> str:
    """`line` with every link to a place in the same page read as its text."""
    return _IN_PAGE.sub(lambda m: m.group(1), line)


def anchor(title: str) -> str:
    """The id a site generator gives a heading (GitHub and kramdown alike): plain text, lower case,
    runs of anything but letters and digits as one "-", none at the ends."""
    return re.sub(r"[^a-z0-9]+", "-", plain(title, markers=False).lower()).strip("-")


def _anchors(title: str) -> set[str]:
    """Ids a heading may be linked by: `anchor`, and with "&" read as "and" (18F: "M&IE and use
    of ..." is linked as #m-and-ie-and-use-...)."""
    return {anchor(title), anchor(title.replace("&", " and "))}


@dataclass(frozen=True)
class Target:
    """Where a link in a policy document points: the policy `file` and, when the link names one,
    the heading `line` of the section it points to (None: the document as a whole)."""

    file: str
    line: int | None


def _sections(section: Section) -> Iterable[Section]:
    yield section
    for child in section.children:
        yield from _sections(child)


class LinkIndex:
    """Resolves link targets against a set of policy documents.

    A page is known by its file's stem ("travel-guide-faq") and by the slugs its front matter
    gives (`permalink`, `redirect_from`); an anchor by the ids of its document's headings.
    """

    def __init__(self, docs: list[PolicyDocument]):
        self.docs = {doc.file: doc for doc in docs}
        self.pages: dict[str, str] = {}
        for doc in docs:
            for key in (PurePosixPath(doc.file).stem, *self._slugs(doc)):
                self.pages.setdefault(key.lower(), doc.file)
        self.headings = {doc.file: self._heading_ids(doc) for doc in docs}

    @staticmethod
    def _slugs(doc: PolicyDocument) -> list[str]:
        found = []
        for key in ("permalink", "redirect_from"):
            value = doc.meta.get(key)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.strip("/"):
                    found.append(item.strip("/").rsplit("/", 1)[-1])
        return found

    @staticmethod
    def _heading_ids(doc: PolicyDocument) -> dict[str, int]:
        ids: dict[str, int] = {}
        for section in _sections(doc.root):
            if section.level:
                for key in _anchors(section.title):
                    ids.setdefault(key, section.start)
        return ids

    def resolve(self, file: str, target: str) -> Target | None:
        """The policy place `target` (a link's href, written in `file`) points to; None for the
        outside world, a page that is not a policy document here, or an anchor no heading has."""
        target = target.strip()
        if not target or _SCHEME.match(target):
            return None
        path, _, fragment = target.partition("#")
        if path:
            page = PurePosixPath(path.rstrip("/")).name.lower()
            page = page.rsplit(".", 1)[0] if page.endswith((".md", ".markdown", ".html")) else page
            found = self.pages.get(page)
            if found is None:
                return None
            file = found
        if not fragment:
            return Target(file, None) if path else None
        line = self.headings.get(file, {}).get(fragment.lower())
        return Target(file, line) if line else (Target(file, None) if path else None)


def link_targets(lines: list[str]) -> list[str]:
    """The hrefs of the Markdown links in `lines` (links read over line breaks), in order."""
    return [m.group(2) for m in _LINK.finditer("\n".join(lines))]


def references(chunks: list[Chunk], names: list[str], docs: list[PolicyDocument]) -> list[list[str]]:
    """For each chunk (named `names[i]`), the other skills its links point into, in the order it
    first links to them: a link to a heading names the skill whose pieces hold that heading's line;
    a link to a page without an anchor names the skill that holds the page's first line of text.
    Links to the outside, to pages that are not policy documents here, and to the chunk itself
    name nothing."""
    index = LinkIndex(docs)
    owner: dict[tuple[str, int], str] = {}
    first: dict[str, str] = {}
    for chunk, name in zip(chunks, names):
        for piece in chunk.pieces:
            for no in range(piece.start, piece.end + 1):
                owner[(chunk.doc.file, no)] = name
    for doc in docs:
        line = next((no for no, text in enumerate(doc.view, 1) if text.strip()), None)
        if line and (doc.file, line) in owner:
            first[doc.file] = owner[(doc.file, line)]
    out = []
    for chunk, name in zip(chunks, names):
        found: list[str] = []
        for href in link_targets([text for _, text in chunk.lines()]):
            target = index.resolve(chunk.doc.file, href)
            if target is None:
                continue
            other = owner.get((target.file, target.line)) if target.line else first.get(target.file)
            if other and other != name and other not in found:
                found.append(other)
        out.append(found)
    return out
