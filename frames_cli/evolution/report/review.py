"""What `frames review` shows for one candidate, gathered: motivating failures, blueprint, results, gate
verdict, diff (review_markdown.py writes it as Markdown)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError
from frames_cli.evolution.round.commit import gate_overrides
from frames_cli.evolution.report.menu import changed_skill_names
from frames_cli.evolution.decide.recommend import member_line
from frames_cli.evolution.state.records import Candidate, RunState
from frames_cli.gitstore.history import DiffStat
from frames_cli.gitstore.repo import SKILLS_PREFIX
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.layout import Workspace


@dataclass(frozen=True)
class SkillContext:
    """A changed skill as the reviewer needs it: where its rules come from and what it refers to.

    Attributes:
        name: the skill name.
        backlinks: "policies/airline.md:12-30 Heading path", with " (policy text changed since)"
            when the span's sha256 no longer matches the policy file in the working tree.
        references: names of other skills it refers to.
        problem: why the skill could not be read at the candidate commit ("" when it could).
        policy_changes: per stale back-link, "<where>" then its changed lines ("-" the text the
            skill was written from, "+" the text now; workspace/amendments.py).
    """

    name: str
    backlinks: list[str]
    references: list[str]
    problem: str = ""
    policy_changes: list[list[str]] = field(default_factory=list)


@dataclass(frozen=True)
class Review:
    """Everything `frames review` shows for one candidate.

    Attributes:
        run_id, status: the run.
        candidate, parent, base: the candidate, its parent (None for S0) and S0.
        skills: context of every skill changed against the parent.
        diff: unified diff of skills/ from the parent's commit to the candidate's.
        stat: its line counts.
        trailers: the `Frames-*` trailers of the candidate's commit message (run, parent, models).
        promote: the command that makes a branch of the candidate.
        gate_overrides: the `frames promote --override-gate` records of this candidate
            (evolution.commit.gate_overrides), oldest first.
        simulator_notice: the caveat when a role of the run ran on frames-sim, else None.
        recommendation: `recommend.member_line`: the candidate's gain test against the run's
            recommendation bar, and whether it is the best member (None for S0 or at α = 1).
        disputed: the run's disputed labels (evolution/state/disputes.py), `{"case_id", "passage",
            "reason", "round", "diagnoser", ...}` each: cases left out of the gate and the front.
    """

    run_id: str
    status: str
    candidate: Candidate
    parent: Candidate | None
    base: Candidate
    skills: list[SkillContext]
    diff: str
    stat: DiffStat
    trailers: dict[str, str]
    promote: str
    gate_overrides: list[dict[str, Any]] = field(default_factory=list)
    simulator_notice: str | None = None
    disputed: list[dict[str, Any]] = field(default_factory=list)
    recommendation: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for `frames review --json`: the run, the three candidates (Candidate.to_json),
        the changed skills' context, the unified diff and its size in lines, trailers, promote,
        gate overrides, disputed labels, the recommendation line (null under the paper's rule);
        `simulator_notice` first (null when no role ran on the simulator)."""
        return {
            "simulator_notice": self.simulator_notice,
            "run_id": self.run_id,
            "status": self.status,
            "candidate": self.candidate.to_json(),
            "parent": self.parent.to_json() if self.parent else None,
            "base": self.base.to_json(),
            "skills": [dataclasses.asdict(s) for s in self.skills],
            "diff": self.diff,
            "diff_lines": self.stat.lines_changed,
            "trailers": self.trailers,
            "promote": self.promote,
            "gate_overrides": self.gate_overrides,
            "disputed": self.disputed,
            "recommendation": self.recommendation,
        }


def build_review(ws: Workspace, store: GitStore, state: RunState, cand: Candidate) -> Review:
    """Gather the review of `cand`: diff against its parent, changed skills' back-links, results.

    Raises:
        InputError: the run has no S0 yet (nothing was evaluated).
        GitError: a commit of the run is missing from the repository.
    """
    from frames_cli.llm.transport.providers import simulator_notice

    base = state.base_candidate()
    if base is None:
        raise InputError(f"run {state.run_id} has not evaluated S0 yet; nothing to review")
    parent = state.candidate(cand.parent_id) if cand.parent_id else None
    before = parent.commit if parent else cand.commit
    stat = store.diff_stat(before, cand.commit)
    names = sorted(set(cand.changed_skills) | set(changed_skill_names(stat)))
    files = store.read_files(cand.commit)
    skills = [_skill_context(ws, name, files, store) for name in names]
    return Review(
        run_id=state.run_id,
        status=state.status,
        candidate=cand,
        parent=parent,
        base=base,
        skills=skills,
        diff=store.diff(before, cand.commit),
        stat=stat,
        trailers={k: v for k, v in store.trailers(cand.commit).items() if k.startswith("Frames-")},
        promote=f"frames promote {state.run_id}/{cand.id}",
        gate_overrides=gate_overrides(store, state, cand),
        simulator_notice=simulator_notice(state.config.get("models", {})),
        disputed=[{"case_id": cid, **rec} for cid, rec in sorted((state.checkpoint.get("disputes") or {}).items())],
        recommendation=member_line(state, cand),
    )


def _skill_context(ws: Workspace, name: str, files: dict[str, bytes], store: GitStore) -> SkillContext:
    """Back-links (checked against the working tree's policy files, with the changed lines of
    stale ones) and references of skill `name`."""
    from frames_cli.workspace.amendments import working_tree_stale_links

    from frames_cli.formats.skill import text_sha256
    from frames_cli.formats.skill_file import parse_skill_bytes

    path = f"{SKILLS_PREFIX}{name}/SKILL.md"
    if path not in files:
        return SkillContext(name, [], [], "deleted in this candidate")
    try:
        skill = parse_skill_bytes(files[path], Path(path))
        links = skill.backlinks
    except (InputError, ValueError) as exc:
        return SkillContext(name, [], [], str(exc))
    rendered = []
    for link in links:
        span_text = f"{link.start}" if link.start == link.end else f"{link.start}-{link.end}"
        text = f"{link.file}:{span_text} {link.heading}".rstrip()
        policy = (ws.root / link.file).resolve()
        if not policy.is_relative_to(ws.root.resolve()):
            text += " (outside the workspace: not checked)"
        elif policy.is_file():
            span = policy.read_text(encoding="utf-8", errors="replace").splitlines()[link.start - 1 : link.end]
            if text_sha256("\n".join(span)) != link.sha256:
                text += " (policy text changed since)"
        else:
            text += " (policy file missing)"
        rendered.append(text)
    changes = [[link.where, *link.changed] for link in working_tree_stale_links(ws, [skill], store)]
    return SkillContext(name, rendered, skill.references, policy_changes=changes)
