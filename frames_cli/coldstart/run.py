"""`frames coldstart` as stages: read policies → cut → name → compare with skills/ → generate → write → commit.

Idempotent by construction: a skill is regenerated only when its back-linked policy text, its cut
or its mode (verbatim or a model) changed, so an unchanged policy writes nothing and commits
nothing. A skill edited since coldstart wrote it (its `frames-generated` hash no longer matches)
is never overwritten or removed unless `force`.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from frames_cli.coldstart.base import Rewriter
from frames_cli.formats.coverage import FileCoverage, coverage
from frames_cli.coldstart.describe import describe
from frames_cli.coldstart.quoting import TermWeights
from frames_cli.coldstart.identity import match_existing
from frames_cli.coldstart.links import references
from frames_cli.coldstart.neighbours import Neighbour, closest
from frames_cli.coldstart.naming import assign_names
from frames_cli.coldstart.sectioning import Chunk, cut_document
from frames_cli.coldstart.writer import (
    DESCRIBED_FROM_KEY, KIND_TAGS, MODE_KEY, VERBATIM, backlinks, check_writable, make_skill, tags, verbatim_body,
)
from frames_cli.errors import InputError, Location
from frames_cli.formats.policy import PolicyDocument, all_files, read_policies, skip_reason
from frames_cli.formats.skill import GENERATED_KEY, SKILL_FILE, SKILLS_DIR, Skill
from frames_cli.formats.skill_file import parse_skill_bytes, render_skill
from frames_cli.files.atomic import atomic_write_text
from frames_cli.gitstore.committable import check_committable
from frames_cli.gitstore.worktree import CheckoutChange, Finished, finish_pending
from frames_cli.workspace.config import FramesConfig
from frames_cli.workspace.layout import Workspace


@dataclass
class Planned:
    """One skill coldstart wants, and what becomes of it.

    Attributes:
        action: "create", "update", "keep" (already up to date), "skip" (edited since generation;
            needs --force) or "force" (edited, overwritten because of --force).
        continues: for a later part of a split section, the name of the skill with its first part.
        description: the verbatim description (see `describe.describe`).
        described_from: what `description` was made from (`describe.Description.sources`).
        references: the other skills its policy text links to (`links.references`).
    """

    name: str
    chunk: Chunk
    action: str = ""
    continues: str | None = None
    description: str = ""
    described_from: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)

    def verbatim(self) -> Skill:
        """The skill coldstart writes for this plan without a model."""
        skill = make_skill(
            self.name, self.chunk, verbatim_body(self.chunk, self.continues), self.description, VERBATIM,
            self.references,
        )
        skill.metadata[DESCRIBED_FROM_KEY] = ", ".join(self.described_from)
        return skill


@dataclass
class ColdstartResult:
    """What a coldstart run did.

    Attributes:
        planned: every skill the policies call for, in document order.
        removed: names of generated, unedited skills whose policy section no longer exists.
        orphaned: names of edited skills whose section no longer exists (left alone).
        rewrite_failures: (name, reason) where the model's rewrite failed validation and the
            verbatim text was written instead.
        commit: sha of the commit made, or None when nothing changed.
        coverage: per policy file, after the run.
        skipped_files: (workspace-relative path, reason) of files under policies/ not read as policy.
        oversized: names of skills over `coldstart.max_tokens` that no cut could shrink (one
            paragraph, list item or table bigger than the limit).
        finished: what became of a change an earlier coldstart or adopt left uncommitted when it
            was killed (`gitstore.worktree.finish_pending`), done before this run read skills/.
        model: the `coldstart` model that rewrote the skills, None for verbatim text.
    """

    planned: list[Planned]
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    oversized: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)
    rewrite_failures: list[tuple[str, str]] = field(default_factory=list)
    commit: str | None = None
    coverage: list[FileCoverage] = field(default_factory=list)
    finished: Finished | None = None
    model: str | None = None

    @property
    def simulator_notice(self) -> str | None:
        """One line for people when the skill text this run wrote came from the simulator, else None."""
        from frames_cli.llm.transport.providers import SIM_PREFIX

        if not self.model or not self.model.startswith(f"{SIM_PREFIX}/") or not self.written:
            return None
        return (
            f"Simulated: the bodies and descriptions of these skills were written by {self.model}, a simulator of "
            "model behaviour, not a model; they are test data, not skills to ship."
        )

    def names(self, *actions: str) -> list[str]:
        """Names of planned skills with one of `actions`."""
        return [p.name for p in self.planned if p.action in actions]

    @property
    def written(self) -> list[str]:
        """Names of the skills this run wrote (created, updated or overwritten with --force)."""
        return self.names("create", "update", "force")

    def to_json(self) -> dict:
        """Plain JSON for `frames coldstart --json`: "simulator_notice" (null unless the simulator
        wrote the text), skill names per outcome ("created", "updated", "unchanged",
        "skipped_edited", "removed", "orphaned_edited"), "rewrite_failures", "oversized" (names),
        "skipped_files" ([{"file", "reason"}]), "commit" (sha or null), "coverage"
        (FileCoverage.to_json per policy file) and "finished_earlier" (`Finished.to_json` or null)."""
        return {
            "simulator_notice": self.simulator_notice,
            "created": self.names("create"),
            "updated": self.names("update", "force"),
            "unchanged": self.names("keep"),
            "skipped_edited": self.names("skip"),
            "removed": self.removed,
            "orphaned_edited": self.orphaned,
            "rewrite_failures": [{"skill": n, "reason": r} for n, r in self.rewrite_failures],
            "oversized": self.oversized,
            "skipped_files": [{"file": f, "reason": r} for f, r in self.skipped_files],
            "commit": self.commit,
            "coverage": [c.to_json() for c in self.coverage],
            "finished_earlier": self.finished.to_json() if self.finished else None,
        }


def plan_chunks(
    docs: list[PolicyDocument], config: FramesConfig, on_disk: dict[str, Skill | InputError] | None = None, *,
    force: bool = False,
) -> list[Planned]:
    """Cut every document, name the chunks, describe them and find the skills their links point
    into, in document order (actions unset).

    A chunk that is already a skill on disk (same back-linked file and heading path, see
    `identity.match_existing`) keeps that skill's name; other skills' names are not taken.
    """
    chunks = [chunk for doc in docs for chunk in cut_document(doc, config.coldstart)]
    fixed, reserved = match_existing(chunks, on_disk or {}, force=force)
    names = assign_names(chunks, fixed, reserved)
    plans = [
        Planned(name, chunk, references=refs)
        for name, chunk, refs in zip(names, chunks, references(chunks, names, docs))
    ]
    first: dict[tuple[str, tuple[str, ...]], str] = {}
    weights = {doc.file: TermWeights.of(doc) for doc in docs}
    for plan in plans:
        key = (plan.chunk.doc.file, plan.chunk.heading)
        if plan.chunk.part == 1:
            first[key] = plan.name
        elif plan.chunk.part > 1:
            plan.continues = first.get(key)
        found = describe(plan.chunk, weights[plan.chunk.doc.file], plan.continues, plan.name)
        plan.description, plan.described_from = found.text, found.sources
    return plans


def _neighbours(planned: list[Planned]) -> dict[str, list[Neighbour]]:
    """Every planned skill's closest others by their verbatim catalog lines (`neighbours.closest`),
    the whole set's, so a model's description can set a skill apart from a look-alike in another
    document too. Only what is shown to the model depends on other documents, never what is kept."""
    entries = [
        (
            Neighbour(p.name, p.chunk.doc.file, " > ".join(p.chunk.heading) or p.chunk.doc.title),
            f"{p.name} {p.description}",
        )
        for p in planned
    ]
    return closest(entries)


def _action(existing: Skill | None | InputError, plan: Planned, mode: str, force: bool) -> str:
    """What to do for one planned skill given what is on disk (see `Planned.action`).

    An unedited skill is kept when its back-links and mode are unchanged; in verbatim mode it must
    also be exactly what this version of coldstart writes, so a better description or body layout
    reaches unedited skills (a model's text cannot be compared without calling the model). A kind
    tag (`KIND_TAGS`) added or removed counts as an edit: `general-rules` decides whether the
    agent is given a skill or chooses it (decision 0099), and `frames-generated` covers only the
    text. The file-name tag follows a renamed document.
    """
    if existing is None:
        return "create"
    if isinstance(existing, InputError):
        return "force" if force else "skip"
    try:
        same_source = existing.backlinks == backlinks(plan.chunk)
    except ValueError:
        same_source = False
    kinds_edited = {t for t in existing.tags if t in KIND_TAGS} != {t for t in tags(plan.chunk) if t in KIND_TAGS}
    if existing.edited or kinds_edited:
        return "force" if force else ("keep" if same_source else "skip")
    if not same_source or existing.metadata.get(MODE_KEY) != mode:
        return "update"
    if mode == VERBATIM and render_skill(existing) != render_skill(plan.verbatim()):
        return "update"
    return "keep"


def _generated_leftovers(on_disk: dict[str, Skill | InputError], planned: set[str]) -> tuple[list[str], list[str]]:
    """(removable, orphaned): generated skills no planned section needs, unedited or edited."""
    removable: list[str] = []
    orphaned: list[str] = []
    for name, skill in sorted(on_disk.items()):
        if name in planned or isinstance(skill, InputError) or GENERATED_KEY not in skill.metadata:
            continue
        (orphaned if skill.edited else removable).append(name)
    return removable, orphaned


def _read_skills(ws: Workspace, force: bool) -> dict[str, Skill | InputError]:
    """Every `skills/<folder>/SKILL.md` by folder name, parsed, or (with `force`) the error that
    stopped it, so `--force` may overwrite a broken file like any edited one.

    Raises:
        InputError: without `force`, the first file that does not parse, as `skills/x/SKILL.md:line`:
            guessing whether a broken file is an edited skill would commit around a mistake.
    """
    out: dict[str, Skill | InputError] = {}
    for path in sorted(ws.skills_dir.glob(f"*/{SKILL_FILE}")):
        try:
            out[path.parent.name] = parse_skill_bytes(path.read_bytes(), Path(ws.relative(path)))
        except InputError as exc:
            if not force:
                raise InputError(
                    f"{exc.message} (fix it, or delete it and coldstart makes it again)", exc.location
                ) from None
            out[path.parent.name] = exc
    return out


#: Longest commit subject: what `git log --oneline` and most review tools show whole.
SUBJECT_CHARS = 72


def commit_subject(written: int, files: list[str], simulated: bool) -> str:
    """"frames coldstart: 6 skills from policies/airline.md", the files counted when naming them
    would pass SUBJECT_CHARS, and " (simulated text)" when the simulator wrote it."""
    from frames_cli.formatting import plural

    tail = " (simulated text)" if simulated else ""
    subject = f"frames coldstart: {plural(written, 'skill')} from {', '.join(files) or 'policies/'}{tail}"
    if len(subject) > SUBJECT_CHARS:
        subject = f"frames coldstart: {plural(written, 'skill')} from {plural(len(files), 'policy file')}{tail}"
    return subject


def commit_text(result: ColdstartResult) -> str:
    """The commit message: a subject of at most SUBJECT_CHARS characters (`commit_subject`), then
    the simulator notice when it wrote the text, the policy files, the skills made (with their
    files), removed and skipped; trailers `Frames-Command: coldstart` and, with a model,
    `Frames-Models: coldstart=<model>`."""
    from frames_cli.gitstore.message import commit_message

    written = [p for p in result.planned if p.action in ("create", "update", "force")]
    files = sorted({p.chunk.doc.file for p in written})
    notice = result.simulator_notice
    lines = [notice, ""] if notice else []
    if files:
        lines += ["Policy files:"] + [f"- {f}" for f in files] + [""]
    if written:
        lines.append("Skills made:")
        lines += [f"- {p.name} ({p.chunk.doc.file}, {p.action})" for p in written]
    if result.removed:
        lines += ["", "Removed (their policy section is gone):"] + [f"- {n}" for n in result.removed]
    skipped = result.names("skip")
    if skipped:
        lines += [
            "", "Skipped (edited since generation or not made by coldstart; `frames coldstart --force` overwrites):",
        ] + [f"- {n}" for n in skipped]
    trailers = {"Frames-Command": "coldstart"}
    if result.model:
        trailers["Frames-Models"] = f"coldstart={result.model}"
    return commit_message(commit_subject(len(written), files, bool(notice)), "\n".join(lines).strip("\n"), trailers)


def run_coldstart(
    ws: Workspace,
    config: FramesConfig,
    *,
    rewriter: Rewriter | None = None,
    force: bool = False,
    commit: bool = True,
) -> ColdstartResult:
    """Make or refresh the skills of every policy document, write them and commit them.

    Args:
        rewriter: turns verbatim skills into rewritten ones (the model path); None keeps text verbatim.
        force: overwrite (and remove) skills edited since coldstart wrote them.
        commit: make the git commit (False for a dry look at the files).

    Raises:
        InputError: no policy documents, or a bad one (binary, not UTF-8, empty, too large), or
            (without `force`) a skill file that does not parse; nothing is written then.
        GitError: the workspace is not in a git repository, or one git would not commit in
            (`check_committable`; nothing is written), or git refused the commit (every file
            written is put back first).
    """
    docs, skipped = _read_documents(ws)
    finished = None
    if commit:
        # Before skills/ is read: a killed run's files are committed or put back first.
        finished = finish_pending(ws.root, ws.make_state_dir())
        check_committable(ws.root)

    mode = rewriter.mode if rewriter else VERBATIM
    on_disk = _read_skills(ws, force)
    planned = plan_chunks(docs, config, on_disk, force=force)
    for plan in planned:
        plan.action = _action(on_disk.get(plan.name), plan, mode, force)
    model = rewriter.mode.removeprefix("model ") if rewriter else None
    result = ColdstartResult(
        planned, skipped, [p.name for p in planned if p.chunk.oversized], finished=finished, model=model
    )
    result.removed, result.orphaned = _generated_leftovers(on_disk, {p.name for p in planned})
    if force:
        result.removed += result.orphaned
        result.orphaned = []

    todo = [p for p in planned if p.action in ("create", "update", "force")]
    verbatim = [p.verbatim() for p in todo]
    if rewriter and todo:
        outcomes = rewriter([(p.chunk, s) for p, s in zip(todo, verbatim)], _neighbours(planned))
    else:
        outcomes = [(s, None) for s in verbatim]
    skills = [skill for skill, _ in outcomes]
    result.rewrite_failures = [(skill.name, error) for skill, error in outcomes if error]

    check_writable(ws, skills, {p.name: p.chunk for p in todo})
    paths = [f"{SKILLS_DIR}/{s.name}/{SKILL_FILE}" for s in skills] + [
        f"{SKILLS_DIR}/{n}/{SKILL_FILE}" for n in result.removed
    ]
    change = CheckoutChange.begin(ws.root, ws.state_dir, "coldstart") if commit and paths else None
    with change.writing() if change else nullcontext():
        if change is not None:
            change.touch(paths)
        _write(ws, skills, result.removed, on_disk)

    if change is not None:
        result.commit = change.commit(commit_text(result))
    result.coverage = coverage(docs, [s for s in on_disk.values() if isinstance(s, Skill)])
    return result


def _read_documents(ws: Workspace) -> tuple[list[PolicyDocument], list[tuple[str, str]]]:
    """The policy documents, and the files of policies/ skipped with the reason; InputError when there is none."""
    docs = read_policies(ws.root, ws.policies_dir)
    skipped = [(ws.relative(p), why) for p in all_files(ws.policies_dir) if (why := skip_reason(p, ws.policies_dir))]
    if not docs:
        named = f"; skipped: {', '.join(f'{f} ({why})' for f, why in skipped)}" if skipped else ""
        raise InputError(
            f"no policy documents (add Markdown or text files to policies/){named}", Location(ws.policies_dir)
        )
    return docs, skipped


def _write(ws: Workspace, skills: list[Skill], removed: list[str], on_disk: dict[str, Skill | InputError]) -> None:
    """Write `skills` and delete the `removed` ones (their folder too when left empty); `on_disk` follows."""
    for skill in skills:
        atomic_write_text(ws.skills_dir / skill.name / SKILL_FILE, render_skill(skill))
        on_disk[skill.name] = skill
    for name in removed:
        del on_disk[name]
        path = ws.skills_dir / name / SKILL_FILE
        path.unlink(missing_ok=True)
        if path.parent.is_dir() and not any(path.parent.iterdir()):
            path.parent.rmdir()
