"""The deterministic cut: a policy document's heading tree → chunks of line spans, one chunk per skill.

Rules (issue 2): the preamble (the title section's own text, or the lines before the first heading)
is its own chunk; a section that fits `coldstart.max_lines` / `coldstart.max_tokens` is one chunk;
a longer one gives its own text and each child a chunk, and a long leaf is split at paragraphs (and,
inside an over-long paragraph, before list items); a chunk with fewer than `coldstart.min_lines`
content lines joins a neighbour. Every non-blank line of the document ends up in exactly one piece.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from frames_cli.formats.policy import PolicyDocument, Section
from frames_cli.tokens import approx_tokens
from frames_cli.workspace.config import ColdstartConfig

#: Characters per token for the size estimate; OpenAI's rule of thumb for English text.
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s")


@dataclass(frozen=True)
class Piece:
    """A contiguous span of one section's text: lines `start`..`end` (1-based, inclusive, no blank ends)."""

    heading: tuple[str, ...]
    start: int
    end: int


@dataclass
class Chunk:
    """What one skill is made from.

    Attributes:
        doc: the document the pieces come from.
        heading: heading path the skill is named after.
        kind: "general" (the preamble) or "section".
        pieces: spans in document order.
        part: 1-based part number when a long span was split (0 otherwise); `parts` is how many.
        bare: only headings, no rule text: never a skill of its own, always merged.
    """

    doc: PolicyDocument
    heading: tuple[str, ...]
    kind: str
    pieces: list[Piece]
    part: int = 0
    parts: int = 0
    bare: bool = False

    @property
    def content_lines(self) -> int:
        """Non-blank lines over all pieces."""
        return sum(self.doc.content_lines(p.start, p.end) for p in self.pieces)

    def text(self, piece: Piece) -> str:
        """The verbatim text of one piece."""
        return "\n".join(self.doc.lines[piece.start - 1 : piece.end])


def _trim(doc: PolicyDocument, start: int, end: int) -> tuple[int, int] | None:
    """`start`..`end` without blank lines at either end, or None when nothing is left."""
    while start <= end and not doc.lines[start - 1].strip():
        start += 1
    while end >= start and not doc.lines[end - 1].strip():
        end -= 1
    return (start, end) if start <= end else None


def _tokens(doc: PolicyDocument, start: int, end: int) -> int:
    return approx_tokens("\n".join(doc.lines[start - 1 : end]))


def _fits(doc: PolicyDocument, start: int, end: int, cfg: ColdstartConfig) -> bool:
    return doc.content_lines(start, end) <= cfg.max_lines and _tokens(doc, start, end) <= cfg.max_tokens


def _blocks(doc: PolicyDocument, start: int, end: int, cfg: ColdstartConfig) -> list[tuple[int, int]]:
    """Paragraphs of `start`..`end` (blank-line separated; a fenced code block is one paragraph
    whatever blank lines it holds); an over-long paragraph is cut before top-level list items, and
    as a last resort every `max_lines` lines, but never inside fenced code."""
    blocks: list[tuple[int, int]] = []
    begin: int | None = None
    for no in range(start, end + 2):
        blank = no > end or (not doc.lines[no - 1].strip() and no not in doc.fenced)
        if blank and begin is not None:
            blocks.append((begin, no - 1))
            begin = None
        elif not blank and begin is None:
            begin = no
    out: list[tuple[int, int]] = []
    for b, e in blocks:
        if _fits(doc, b, e, cfg):
            out.append((b, e))
            continue
        cut, last_item = b, 0
        for no in range(b + 1, e + 1):
            if _LIST_ITEM.match(doc.lines[no - 1]) and no not in doc.fenced:
                last_item = no
            inside_code = no in doc.fenced and no - 1 in doc.fenced
            if not inside_code and not _fits(doc, cut, no, cfg):
                at = last_item if cut < last_item <= no else no
                out.append((cut, at - 1))
                cut = at
        out.append((cut, e))
    return out


def _split(doc: PolicyDocument, heading: tuple[str, ...], start: int, end: int, cfg: ColdstartConfig, kind: str) -> list[Chunk]:
    """Pack the paragraphs of a span greedily into parts that each fit."""
    groups: list[tuple[int, int]] = []
    for b, e in _blocks(doc, start, end, cfg):
        if groups and _fits(doc, groups[-1][0], e, cfg):
            groups[-1] = (groups[-1][0], e)
        else:
            groups.append((b, e))
    return [Chunk(doc, heading, kind, [Piece(heading, b, e)], part=i, parts=len(groups)) for i, (b, e) in enumerate(groups, 1)]


def _span_chunks(doc: PolicyDocument, heading: tuple[str, ...], start: int, end: int, cfg: ColdstartConfig, kind: str) -> list[Chunk]:
    span = _trim(doc, start, end)
    if span is None:
        return []
    if _fits(doc, *span, cfg):
        return [Chunk(doc, heading, kind, [Piece(heading, *span)])]
    return _split(doc, heading, *span, cfg, kind)


def _cut_section(doc: PolicyDocument, section: Section, cfg: ColdstartConfig) -> list[Chunk]:
    whole = _trim(doc, section.start, section.end)
    if whole and (not section.children or _fits(doc, *whole, cfg)):
        return _span_chunks(doc, section.path, section.start, section.end, cfg, "section")
    chunks = _span_chunks(doc, section.path, section.start, section.own_end, cfg, "section")
    if len(chunks) == 1 and chunks[0].content_lines <= doc.heading_lines(section):
        chunks[0].bare = True
    for child in section.children:
        chunks.extend(_cut_section(doc, child, cfg))
    return chunks


def _merge_small(chunks: list[Chunk], cfg: ColdstartConfig) -> list[Chunk]:
    """Join each chunk under `min_lines` content lines, or bare (headings only), to its next
    neighbour (the last one to its previous).

    The joined chunk keeps the heading of the bigger side (the first on a tie), so a bare parent
    heading folds into its first child, and a short closing paragraph into the part before it.
    """
    chunks = list(chunks)
    i = 0
    while len(chunks) > 1 and i < len(chunks):
        small = chunks[i]
        if small.content_lines >= cfg.min_lines and not small.bare:
            i += 1
            continue
        j = i + 1 if i + 1 < len(chunks) else i - 1
        a, b = sorted((i, j))
        first, second = chunks[a], chunks[b]
        keep = first if first.content_lines >= second.content_lines else second
        merged = Chunk(first.doc, keep.heading, keep.kind, first.pieces + second.pieces, keep.part, keep.parts, first.bare and second.bare)
        chunks[a : b + 1] = [merged]
        i = a
    return chunks


def cut_document(doc: PolicyDocument, cfg: ColdstartConfig) -> list[Chunk]:
    """Cut one document into chunks, in document order (the general-rules chunk or chunks first;
    a title heading with no text under it joins the first section instead).

    A document without headings is one root chunk of kind "section", split into parts when long.
    """
    root = doc.root
    if not root.children:
        return _merge_small(_span_chunks(doc, root.path, root.start, root.end, cfg, "section"), cfg)
    general = _span_chunks(doc, root.path, root.start, root.own_end, cfg, "general")
    body: list[Chunk] = []
    for child in root.children:
        body.extend(_cut_section(doc, child, cfg))
    body = _merge_small(body, cfg)
    if root.level and len(general) == 1 and general[0].content_lines == 1:
        # A bare title is no skill of its own: it opens the first section. A preamble with text
        # stays its own general-rules skill, however short (issue 2).
        first = body[0]
        body[0] = Chunk(doc, first.heading, first.kind, general[0].pieces + first.pieces, first.part, first.parts)
        general = []
    return general + body
