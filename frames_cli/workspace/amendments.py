"""Policy amendments under existing skills: which back-linked spans changed, and the changed lines.

A skill's back-link records the sha256 of the policy lines it was written from. When the policy
file no longer has that text at those lines, the skill is stale. To show *what* changed, the text
the skill was written from is looked up in the policy file's git history (the newest version
whose lines start..end hash to the recorded sha256), and that version is diffed with the current
file; the changes that touch the span are kept. Used by `frames status` and `frames review` (the
working tree's policies) and by `frames evolve`, whose diagnosers are told which lines changed
(the base commit's policies).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from frames_cli.errors import InputError
from frames_cli.formats.policy import decode_policy, span_sha256

if TYPE_CHECKING:
    from frames_cli.formats.skill import BackLink, Skill
    from frames_cli.gitstore.store import GitStore
    from frames_cli.workspace.layout import Workspace

#: Older versions of a policy file searched for the text a skill was written from.
HISTORY_DEPTH = 50


@dataclass(frozen=True)
class StaleLink:
    """One back-link whose policy text changed.

    Attributes:
        skill: the skill's name.
        file, start, end, heading: the back-link (1-based inclusive lines of the version the skill
            was written from).
        changed: the changed lines as diff lines: "-" the text the skill was written from, "+" the
            text now; when that version is not in the history, every current line of the span
            with "+" and a first line saying so.
        found: False when the version the skill was written from is not in the git history.
    """

    skill: str
    file: str
    start: int
    end: int
    heading: str
    changed: list[str]
    found: bool = True

    @property
    def where(self) -> str:
        """ "policies/airline.md:12-30 Heading > Path"."""
        return f"{self.file}:{self.start}-{self.end} {self.heading}".rstrip()

    def to_json(self) -> dict:
        """Plain JSON (`frames status --json` under `stale_links`)."""
        return {"skill": self.skill, "file": self.file, "start": self.start, "end": self.end, "heading": self.heading,
                "changed": self.changed, "found": self.found}


def stale_links(skills: Iterable[Skill], current: Callable[[str], list[str] | None],
                history: Callable[[str], Iterable[list[str]]]) -> list[StaleLink]:
    """Every back-link of `skills` whose span no longer has its recorded text.

    Args:
        skills: the skills to check.
        current: policy file path → its lines now, or None when it cannot be read (then the
            back-link is a problem for `frames validate`, not an amendment, and is skipped).
        history: policy file path → its older versions' lines, newest first.
    """
    out: list[StaleLink] = []
    versions: dict[str, list[list[str]]] = {}
    for skill in skills:
        try:
            links = skill.backlinks
        except ValueError:
            continue
        for link in links:
            now = current(link.file)
            if now is None or (link.end <= len(now) and span_sha256(now, link.start, link.end) == link.sha256):
                continue
            if link.file not in versions:
                versions[link.file] = list(history(link.file))
            out.append(_stale(skill.name, link, now, versions[link.file]))
    return out


def _stale(skill: str, link: BackLink, now: list[str], older: list[list[str]]) -> StaleLink:
    then = next((v for v in older if link.end <= len(v) and span_sha256(v, link.start, link.end) == link.sha256), None)
    if then is None:
        shown = [f"+{line}" for line in now[link.start - 1 : link.end]]
        return StaleLink(skill, link.file, link.start, link.end, link.heading,
                         ["(its source text is not in the git history; the lines there now:)", *shown], found=False)
    changed: list[str] = []
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, then, now, autojunk=False).get_opcodes():
        # Keep changes inside the span, and insertions at its edges (a rule added right after it).
        touches = a0 < link.end and a1 > link.start - 1 if a1 > a0 else link.start - 1 <= a0 <= link.end
        if tag != "equal" and touches:
            changed += [f"-{line}" for line in then[a0:a1]] + [f"+{line}" for line in now[b0:b1]]
    if not changed:
        # The same lines moved elsewhere in the file: the text is unchanged, its place is not.
        changed = [f"(the text is unchanged but no longer at lines {link.start}-{link.end})"]
    return StaleLink(skill, link.file, link.start, link.end, link.heading, changed)


def workspace_stale_links(root_files: Callable[[str], bytes | None], store: GitStore | None, skills: Iterable[Skill],
                          ref: str = "HEAD") -> list[StaleLink]:
    """`stale_links` with the policies as `root_files` gives them (path → bytes, None when missing)
    and their history from `store` at `ref` (no history without a store or a commit)."""

    def current(path: str) -> list[str] | None:
        data = root_files(path)
        if data is None:
            return None
        try:
            return decode_policy(data, path)
        except InputError:
            return None

    def history(path: str) -> Iterable[list[str]]:
        if store is None:
            return
        for data in store.file_versions(ref, path, HISTORY_DEPTH):
            try:
                yield decode_policy(data, path)
            except InputError:
                continue

    return stale_links(skills, current, history)


def diagnoser_notice(links: list[StaleLink]) -> str:
    """The text diagnosers are given about amended policy ("" when nothing changed): per stale
    skill, the policy span and its changed lines, asking them to bring the skill in line."""
    if not links:
        return ""
    lines = ["The policy changed after these skills were written. Where a failure comes from the change, propose "
             "bringing the skill in line with the new text (lines starting with - were removed, + added):"]
    for link in links:
        lines.append(f"- skill {link.skill}, {link.where}:")
        lines += [f"    {line}" for line in link.changed]
    return "\n".join(lines)


def working_tree_stale_links(ws: Workspace, skills: Iterable[Skill], store: GitStore | None = None) -> list[StaleLink]:
    """`stale_links` of `skills` against the policy files in the working tree, with their history
    at HEAD from `store` (opened here when None; no history outside a git repository). Paths
    outside the workspace are not read."""
    from frames_cli.errors import GitError
    from frames_cli.gitstore.store import GitStore

    root = ws.root.resolve()

    def read(path: str) -> bytes | None:
        file = (root / path).resolve()
        if not file.is_relative_to(root) or not file.is_file():
            return None
        try:
            return file.read_bytes()
        except OSError:
            return None

    if store is None:
        try:
            store = GitStore(ws.root)
        except GitError:
            pass
    return workspace_stale_links(read, store, skills)
