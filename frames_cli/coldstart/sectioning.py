"""The deterministic cut: a policy document's heading tree → chunks of line spans, one chunk per skill.

Rules (issues 2 and 13): sizes are approximate tokens of the reading view (`PolicyDocument.view`),
never lines, so a long one-line paragraph counts for what it says. The preamble (the title
section's own text, or the text before the first heading) is its own chunk; a section that fits
`coldstart.max_tokens` is one chunk; a longer one gives its own text and each child a chunk, and a
long leaf is split into balanced parts between blocks: a paragraph, one top-level list item with
everything indented under it, a table or a fenced code block is never cut, and a lead-in line
ending in ":" stays with the block it introduces. A block bigger than the limit stays whole and
its chunk is marked `oversized`. A chunk under `coldstart.min_tokens`, or a bare heading, joins a
neighbour under the same parent heading. A chunk with no rule or procedure (`prose.has_substance`:
a greeting, a "Questions?" contact line, a list of links, an introduction pointing below) joins the
section of its document it shares the most words with (a preamble: the section after it), and
never keeps its own heading. Every line with text ends up in exactly one piece.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from frames_cli.coldstart.links import IN_PAGE_LINE
from frames_cli.coldstart.prose import Sentence, has_substance, sentences
from frames_cli.formats.markup import plain
from frames_cli.formats.policy import PolicyDocument, Section
from frames_cli.words import tokens
from frames_cli.tokens import approx_tokens
from frames_cli.workspace.config import ColdstartConfig

_LIST_ITEM = re.compile(r"^( {0,3})(?:[-*+]|\d+[.)])\s")
_TABLE_ROW = re.compile(r"^\s*\|")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")


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
        oversized: holds a block (paragraph, list item, table, code) larger than `max_tokens`
            that cannot be cut without cutting a rule apart.
        asides: pieces joined in for lack of substance (`_absorb_hollow`): part of the skill's
            text, never named among the topics it covers.
    """

    doc: PolicyDocument
    heading: tuple[str, ...]
    kind: str
    pieces: list[Piece]
    part: int = 0
    parts: int = 0
    bare: bool = False
    oversized: bool = False
    asides: tuple[Piece, ...] = ()

    @property
    def content_lines(self) -> int:
        """Lines with text over all pieces."""
        return sum(self.doc.content_lines(p.start, p.end) for p in self.pieces)

    @property
    def tokens(self) -> int:
        """Approximate tokens of the chunk's reading text (`tokens.approx_tokens`)."""
        return sum(_tokens(self.doc, p.start, p.end) for p in self.pieces)

    def lines(self) -> list[tuple[int, str]]:
        """(file line number, line) of every piece's lines outside fenced code, in the linked
        reading view (`PolicyDocument.linked`: markup left out, links to other pages kept)."""
        view = self.doc.linked
        return [
            (no, view[no - 1]) for p in self.pieces for no in range(p.start, p.end + 1) if no not in self.doc.fenced
        ]

    def sentences(self) -> list[Sentence]:
        """The prose sentences of the chunk (`prose.sentences`), headings and tables left out."""
        return sentences(self.lines())

    @property
    def substantive(self) -> bool:
        """The chunk states a rule or procedure, or (not a preamble) facts (`prose.has_substance`)."""
        return has_substance(self.sentences(), [line for _, line in self.lines()], preamble=self.kind == "general")

    def text(self, piece: Piece) -> str:
        """The reading text of one piece: the file's lines with markup left out (`PolicyDocument.view`),
        runs of blank lines that markup left behind made one."""
        out: list[str] = []
        for line in self.doc.view[piece.start - 1 : piece.end]:
            if line.strip() or (out and out[-1].strip()):
                out.append(line)
        return "\n".join(out).rstrip("\n")


def _trim(doc: PolicyDocument, start: int, end: int) -> tuple[int, int] | None:
    """`start`..`end` without lines blank in the reading view at either end, or None when nothing is left."""
    while start <= end and not doc.view[start - 1].strip():
        start += 1
    while end >= start and not doc.view[end - 1].strip():
        end -= 1
    return (start, end) if start <= end else None


def _tokens(doc: PolicyDocument, start: int, end: int) -> int:
    return approx_tokens("\n".join(ln for ln in doc.view[start - 1 : end] if ln.strip()))


def _blocks(doc: PolicyDocument, start: int, end: int) -> list[tuple[int, int]]:
    """The uncuttable blocks of `start`..`end` in order (see the module docstring)."""
    view, fenced = doc.view, doc.fenced
    blocks: list[tuple[int, int]] = []
    no = start
    while no <= end:
        if not view[no - 1].strip() and no not in fenced:
            no += 1
            continue
        first = no
        if no in fenced:
            while no <= end and no in fenced:
                no += 1
        elif _LIST_ITEM.match(view[no - 1]):
            no = _item_end(view, no, end) + 1
        else:
            table = bool(_TABLE_ROW.match(view[no - 1]))
            no += 1
            while (
                no <= end and view[no - 1].strip() and no not in fenced
                and (table or not _LIST_ITEM.match(view[no - 1]))
            ):
                no += 1
        blocks.append((first, _trim_end(view, first, no - 1)))
    return _glue_lead_ins(view, blocks)


def _item_end(view: list[str], first: int, end: int) -> int:
    """Last line of the list item starting at `first`: it owns the lines after it up to the next
    item at its own level or less, or text back at (or left of) its own margin after a blank line."""
    indent = _indent(view[first - 1])
    no = first + 1
    while no <= end:
        line = view[no - 1]
        if line.strip():
            if _LIST_ITEM.match(line) and _indent(line) <= indent:
                break
            no += 1
            continue
        nxt = _next_text(view, no, end)
        if nxt is None or _indent(view[nxt - 1]) <= indent:
            break
        no = nxt
    return _trim_end(view, first, no - 1)


def _trim_end(view: list[str], first: int, last: int) -> int:
    while last > first and not view[last - 1].strip():
        last -= 1
    return last


def _next_text(view: list[str], no: int, end: int) -> int | None:
    while no <= end and not view[no - 1].strip():
        no += 1
    return no if no <= end else None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _glue_lead_ins(view: list[str], blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A block ending in ":" ("Here's what you need to do:") or a heading joins the block after it."""
    out: list[tuple[int, int]] = []
    glue = False
    for b, e in blocks:
        if glue and out:
            out[-1] = (out[-1][0], e)
        else:
            out.append((b, e))
        glue = view[e - 1].rstrip().endswith(":") or bool(_HEADING.match(view[e - 1]))
    return out


def _split(
    doc: PolicyDocument, heading: tuple[str, ...], start: int, end: int, cfg: ColdstartConfig, kind: str
) -> list[Chunk]:
    """Pack the blocks of a span into parts of about equal size, each within `max_tokens` when its
    blocks allow (parts are closed at the balanced share, so the last part is not a stub)."""
    blocks = _blocks(doc, start, end)
    sizes = [_tokens(doc, b, e) for b, e in blocks]
    target = sum(sizes) / max(1, math.ceil(sum(sizes) / cfg.max_tokens))
    groups: list[list[int]] = []
    size = 0
    for i, n in enumerate(sizes):
        if groups and size + n <= cfg.max_tokens and size + n / 2 <= target:
            groups[-1].append(i)
            size += n
        else:
            groups.append([i])
            size = n
    chunks = []
    for k, group in enumerate(groups, 1):
        b, e = blocks[group[0]][0], blocks[group[-1]][1]
        big = any(sizes[i] > cfg.max_tokens for i in group)
        chunks.append(
            Chunk(
                doc, heading, kind, [Piece(heading, b, e)], part=k if len(groups) > 1 else 0,
                parts=len(groups) if len(groups) > 1 else 0, oversized=big,
            )
        )
    return chunks


def _span_chunks(
    doc: PolicyDocument, heading: tuple[str, ...], start: int, end: int, cfg: ColdstartConfig, kind: str
) -> list[Chunk]:
    span = _trim(doc, start, end)
    if span is None:
        return []
    if _tokens(doc, *span) <= cfg.max_tokens:
        return [Chunk(doc, heading, kind, [Piece(heading, *span)])]
    return _split(doc, heading, *span, cfg, kind)


def _cut_section(doc: PolicyDocument, section: Section, cfg: ColdstartConfig) -> list[Chunk]:
    whole = _trim(doc, section.start, section.end)
    if whole and (not section.children or _tokens(doc, *whole) <= cfg.max_tokens):
        return _span_chunks(doc, section.path, section.start, section.end, cfg, "section")
    chunks = _span_chunks(doc, section.path, section.start, section.own_end, cfg, "section")
    if len(chunks) == 1 and chunks[0].content_lines <= doc.heading_lines(section):
        chunks[0].bare = True
    for child in section.children:
        chunks.extend(_cut_section(doc, child, cfg))
    return chunks


def _kin(a: Chunk, b: Chunk) -> bool:
    """Two chunks under the same section heading (siblings, or parent and child); sections side by
    side at the top of a document are different processes, never kin."""
    shared = 0
    for x, y in zip(a.heading, b.heading):
        if x != y:
            break
        shared += 1
    return shared > (1 if a.doc.root.level else 0)


def _merge_small(chunks: list[Chunk], cfg: ColdstartConfig) -> list[Chunk]:
    """Join each bare chunk (headings only) to the next one, and each chunk under `min_tokens` to
    a neighbour under the same parent heading (the previous one first); a short section with no
    such neighbour stays a skill of its own rather than be glued to an unrelated one.

    The joined chunk keeps the heading of the bigger side (the first on a tie), so a bare parent
    heading folds into its first child, and a short closing paragraph into the part before it.
    """
    chunks = list(chunks)
    i = 0
    while len(chunks) > 1 and i < len(chunks):
        small = chunks[i]
        if not small.bare and (small.tokens >= cfg.min_tokens or small.part):
            i += 1
            continue
        j: int | None
        if small.bare:
            j = i + 1 if i + 1 < len(chunks) else i - 1
        else:
            j = next(
                (k for k in (i - 1, i + 1) if 0 <= k < len(chunks) and not chunks[k].part and _kin(small, chunks[k])),
                None,
            )
            if j is None:
                i += 1
                continue
        a, b = sorted((i, j))
        first, second = chunks[a], chunks[b]
        keep = first if first.tokens >= second.tokens or second.bare else second
        chunks[a : b + 1] = [_join(first, second, keep)]
        i = a
    return chunks


def _join(first: Chunk, second: Chunk, keep: Chunk, hollow: bool = False) -> Chunk:
    """`first` and `second` (in document order) as one chunk with `keep`'s heading, kind and
    part, pieces in document order; with `hollow`, the side not kept is an aside (`Chunk.asides`)."""
    asides = first.asides + second.asides
    if hollow:
        asides = tuple(dict.fromkeys(asides + tuple((second if keep is first else first).pieces)))
    pieces = sorted(first.pieces + second.pieces, key=lambda p: p.start)
    return Chunk(
        first.doc, keep.heading, keep.kind, pieces, keep.part, keep.parts, first.bare and second.bare,
        first.oversized or second.oversized, asides,
    )


def _words(chunk: Chunk) -> set[str]:
    """The distinct stems (`words.tokens`) of a chunk's heading and text as read (links as
    their text, not their addresses), tables of contents left out: they repeat other sections'
    headings."""
    text = [plain(line) for _, line in chunk.lines() if not IN_PAGE_LINE.match(line)]
    return set(tokens(" ".join([*chunk.heading[-1:], *text])))


def _home(chunks: list[Chunk], i: int, substantive: list[bool], stems: list[set[str]]) -> int:
    """Where chunk `i`, which has no substance, goes: a preamble opens the section after it; any
    other joins the chunk with substance of its document that shares the most with it
    ("Questions? Email TTS-PeopleOps@gsa.gov" the section that names that address): shared stems
    (`stems`, per chunk) weighted by idf(t) = ln((N + 1) / (df(t) + 1)) + 1 over the N chunks,
    divided by √(the other chunk's stems) so a long section does not win by its length; ties go
    to the nearer chunk, the one before it first."""
    if chunks[i].kind == "general":
        return i + 1 if i + 1 < len(chunks) else i - 1
    df = Counter(t for found in stems for t in found)
    n = len(chunks)

    def score(j: int) -> tuple[float, int, int]:
        shared = sum(math.log((n + 1) / (df[t] + 1)) + 1 for t in stems[i] & stems[j])
        return (shared / math.sqrt(len(stems[j]) or 1), -abs(j - i), int(j < i))

    # A section with substance is the home when there is one, never another hollow one.
    homes = [j for j in range(n) if j != i and substantive[j]] or [j for j in range(n) if j != i]
    return max(homes, key=score)


def _absorb_hollow(chunks: list[Chunk]) -> list[Chunk]:
    """Join each chunk without substance (`Chunk.substantive`) to the chunk `_home` finds; the
    joined chunk is named after the side with substance and keeps its place. Each chunk is read
    once (and a joined one again), so a document of many sections stays linear."""
    chunks = list(chunks)
    substantive = [c.substantive for c in chunks]
    stems = [_words(c) for c in chunks] if not all(substantive) else []
    while len(chunks) > 1 and not all(substantive):
        i = substantive.index(False)
        j = _home(chunks, i, substantive, stems)
        hollow, home = chunks[i], chunks[j]
        first, second = (hollow, home) if i < j else (home, hollow)
        chunks[j] = _join(first, second, home if substantive[j] else first, hollow=True)
        substantive[j], stems[j] = chunks[j].substantive, stems[i] | stems[j]
        for found in (chunks, substantive, stems):
            del found[i]
    return chunks


def cut_document(doc: PolicyDocument, cfg: ColdstartConfig) -> list[Chunk]:
    """Cut one document into chunks, in document order (the general-rules chunk or chunks first;
    a title heading with no text under it joins the first section instead; a chunk without
    substance joins a neighbour).

    A document without headings is one root chunk of kind "section", split into parts when long.
    """
    root = doc.root
    if not root.children:
        return _span_chunks(doc, root.path, root.start, root.end, cfg, "section")
    general = _span_chunks(doc, root.path, root.start, root.own_end, cfg, "general")
    body: list[Chunk] = []
    for child in root.children:
        body.extend(_cut_section(doc, child, cfg))
    body = _merge_small(body, cfg)
    if root.level and len(general) == 1 and general[0].content_lines == 1:
        # A bare title is no skill of its own: it opens the first section. A preamble with text
        # stays its own general-rules skill, however short (issue 2).
        body[0] = _join(general[0], body[0], body[0])
        general = []
    return _absorb_hollow(general + body)
