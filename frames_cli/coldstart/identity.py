"""Which skill on disk a chunk already is: a skill's identity is its back-linked file and heading path.

So adding, renaming or reordering documents never renames, removes or re-points another
document's skills: a chunk keeps the name of the skill that links to its file and heading, and no
other chunk may take that name.
"""

from __future__ import annotations

from frames_cli.coldstart.sectioning import Chunk
from frames_cli.coldstart.writer import backlinks
from frames_cli.errors import InputError
from frames_cli.formats.skill import GENERATED_KEY, BackLink, Skill


def _links(skill: Skill) -> list[BackLink]:
    try:
        return skill.backlinks
    except ValueError:
        return []


def match_existing(
    chunks: list[Chunk], on_disk: dict[str, Skill | InputError], *, force: bool = False
) -> tuple[dict[int, str], frozenset[str]]:
    """Pair chunks with the skills on disk they already are.

    A chunk is the skill whose back-links are exactly its own; else, among skills with a back-link
    to the chunk's file and heading path, the one whose back-links name the same headings, then
    the earliest in the file (parts of a split section pair in order).

    Args:
        on_disk: skills by folder name; an entry that did not parse is an InputError.
        force: a skill file that does not parse may be overwritten by a chunk of its name.

    Returns:
        (chunk index → the existing name it keeps, names no other chunk may take). Reserved are
        every skill on disk no chunk pairs with, except generated ones whose back-linked files are
        all gone (a renamed document's sections may take their names again) and, with `force`,
        files that do not parse.
    """
    links = {name: _links(s) for name, s in on_disk.items() if isinstance(s, Skill)}
    fixed = _by_heading(chunks, links, _by_backlinks(chunks, links))
    files = {c.doc.file for c in chunks}
    return fixed, frozenset(_reserved(on_disk, links, set(fixed.values()), files, force))


def _by_backlinks(chunks: list[Chunk], links: dict[str, list[BackLink]]) -> dict[int, str]:
    """Chunk index → the skill whose back-links are exactly the chunk's own (each skill once)."""
    exact = {tuple(found): name for name, found in links.items() if found}
    fixed: dict[int, str] = {}
    used: set[str] = set()
    for i, chunk in enumerate(chunks):
        name = exact.get(tuple(backlinks(chunk)))
        if name and name not in used:
            fixed[i] = name
            used.add(name)
    return fixed


def _by_heading(chunks: list[Chunk], links: dict[str, list[BackLink]], fixed: dict[int, str]) -> dict[int, str]:
    """`fixed`, and for each other chunk the unused skill with a back-link to its file and heading
    path: the one whose back-links name the same headings, else the earliest in the file."""
    by_heading: dict[tuple[str, str], list[str]] = {}
    for name, found in sorted(links.items(), key=lambda kv: (kv[1][0].start if kv[1] else 0, kv[0])):
        for key in dict.fromkeys((link.file, link.heading) for link in found):
            by_heading.setdefault(key, []).append(name)
    fixed = dict(fixed)
    used = set(fixed.values())
    for i, chunk in enumerate(chunks):
        if i in fixed:
            continue
        options = [n for n in by_heading.get((chunk.doc.file, " > ".join(chunk.heading)), []) if n not in used]
        if not options:
            continue
        mine = {" > ".join(p.heading) for p in chunk.pieces}
        same = [n for n in options if {link.heading for link in links[n]} == mine]
        fixed[i] = (same or options)[0]
        used.add(fixed[i])
    return fixed


def _reserved(
    on_disk: dict[str, Skill | InputError], links: dict[str, list[BackLink]], used: set[str], files: set[str],
    force: bool,
) -> set[str]:
    """The skills on disk no chunk pairs with, but generated ones whose back-linked files are all
    gone and, with `force`, files that do not parse."""
    reserved = set()
    for name, skill in on_disk.items():
        if name in used:
            continue
        if isinstance(skill, InputError):
            if not force:
                reserved.add(name)
            continue
        gone = GENERATED_KEY in skill.metadata and links[name] and all(link.file not in files for link in links[name])
        if not gone:
            reserved.add(name)
    return reserved
