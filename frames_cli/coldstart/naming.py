"""Skill names from heading paths: valid under the Agent Skills spec, unique, and stable across runs."""

from __future__ import annotations

import re
import unicodedata

from frames_cli.coldstart.sectioning import Chunk
from frames_cli.formats.skill import MAX_NAME

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
# Section numbers ("2.1.1", "IV.", "A)") say where a heading sits, not what it is about.
_NUMBERING = re.compile(r"^\s*(?:\d+(?:\.\d+)*[.)]|\d+(?:\.\d+)+|[IVXLC]+[.)]|[A-Z][.)])\s+(?=\S)")


def slug(text: str, limit: int = MAX_NAME) -> str:
    """`text` as a spec-valid name: ASCII lowercase words joined by single hyphens, at most `limit`
    characters (cut at a word boundary when possible); "section" when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    out = _NON_ALNUM.sub("-", ascii_text.lower()).strip("-")
    if len(out) > limit:
        cut = out[:limit]
        out = cut.rsplit("-", 1)[0] if "-" in cut and out[limit] != "-" else cut
        out = out.strip("-")
    return out or "section"


def strip_numbering(title: str) -> str:
    """`title` without a leading section number ("2.1 Income" → "Income")."""
    return _NUMBERING.sub("", title)


def _suffix(chunk: Chunk) -> str:
    parts = ["general-rules"] if chunk.kind == "general" else []
    if chunk.part:
        parts.append(f"part-{chunk.part}")
    return "-".join(parts)


def _candidates(chunk: Chunk, stem: str) -> list[str]:
    """Names for `chunk`, most preferred first: the last heading, then longer heading paths, then
    the whole path prefixed by the file's stem. A general-rules chunk is named after its document."""
    suffix = _suffix(chunk)
    heads = [strip_numbering(h) for h in (chunk.heading if chunk.kind != "general" else (chunk.doc.title,))]
    bases = [" ".join(heads[-k:]) for k in range(1, len(heads) + 1)] or [chunk.doc.title]
    bases.append(f"{stem} {bases[-1]}")
    out = []
    for base in bases:
        room = MAX_NAME - (len(suffix) + 1 if suffix else 0)
        name = f"{slug(base, room)}-{suffix}" if suffix else slug(base, room)
        if name not in out:
            out.append(name)
    return out


def assign_names(chunks: list[Chunk]) -> list[str]:
    """One unique name per chunk, in the same order.

    Every chunk starts at its first candidate; all chunks sharing a name move on to their next
    candidate together (so neither keeps the short name by accident of order); when candidates run
    out, a numeric suffix in document order settles it. The result depends only on the chunks.
    """
    options = [_candidates(c, slug(c.doc.file.rsplit("/", 1)[-1].rsplit(".", 1)[0])) for c in chunks]
    level = [0] * len(chunks)
    while True:
        names = [opts[min(lv, len(opts) - 1)] for opts, lv in zip(options, level)]
        seen: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            seen.setdefault(name, []).append(i)
        clashes = [idx for idx in seen.values() if len(idx) > 1]
        movable = [i for idx in clashes for i in idx if level[i] < len(options[i]) - 1]
        if not movable:
            break
        for i in movable:
            level[i] += 1
    used: set[str] = set()
    out = []
    for name in names:
        final, n = name, 2
        while final in used:
            tail = f"-{n}"
            final = slug(name, MAX_NAME - len(tail)) + tail
            n += 1
        used.add(final)
        out.append(final)
    return out
