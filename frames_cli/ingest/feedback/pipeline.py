"""Running converters against a workspace: store with duplicate folding, attach priors, generate, coverage.

The `frames ingest` subcommands of the feedback converters are thin: they build a converter and
call these functions, which hold the workspace side (what is read, what is written, in what order).
Nothing is written when `strict` finds a bad row, and case files are written atomically.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames_cli.errors import InputError
from frames_cli.formats.case import Case
from frames_cli.formats.policy import read_policies
from frames_cli.formats.problems import Problem
from frames_cli.formats.skill_set import SkillSet
from frames_cli.formats.case_files import case_files
from frames_cli.ingest.rows.account import Account
from frames_cli.ingest.cases.dedup import StoreResult, store_cases
from frames_cli.ingest.cases.generator import (
    CaseGenerator,
    Coverage,
    Unit,
    compute_coverage,
    section_units,
    skill_units,
)
from frames_cli.ingest.cases.priors import Prior, Priors, SkillMatcher, attach, load_priors
from frames_cli.ingest.feedback.review_log import APPROVED_KIND
from frames_cli.words import policy_sentences
from frames_cli.workspace.config import FramesConfig
from frames_cli.workspace.layout import Workspace


@dataclass
class IngestReport:
    """What one `frames ingest` run did, for printing and `--json`.

    Attributes:
        stored: the case-file outcome (None when no case was produced).
        problems: bad rows (errors) and warnings, with file and line, in file order.
        priors: (advice text, skills it was attached to; empty = unmatched).
        extra: converter-specific findings (the amendment's changed sections and stale skills).
        account: the converter's account of its fields and rows (None for amendment and generate).
    """

    stored: StoreResult | None = None
    problems: list[Problem] = field(default_factory=list)
    priors: list[tuple[str, list[str]]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    account: Account | None = None

    def add_stored(self, stored: StoreResult) -> None:
        """Record where the cases went; problems in other case files become warnings here (those
        files' bad records were left as they are, and their good cases still took part in dedup)."""
        self.stored = stored
        self.problems.extend(
            Problem(p.location, f"{p.message} (file left unchanged)", "warning") for p in stored.problems
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for `frames ingest --json`: "written" (path or null), "cases" (count),
        "categories" (category → count), "merged", "updated_files", "priors", "problems", then `extra`."""
        stored = self.stored
        return {
            "written": str(stored.path) if stored else None,
            "cases": len(stored.written) if stored else 0,
            "categories": dict(sorted(Counter(c.category for c in stored.written).items())) if stored else {},
            "merged": [{"source": a, "into": b} for a, b in stored.merged] if stored else [],
            "updated_files": [str(p) for p in stored.updated_files] if stored else [],
            "priors": [{"text": t, "skills": s} for t, s in self.priors],
            "problems": [
                {"location": str(p.location), "severity": p.severity, "message": p.message} for p in self.problems
            ],
            **({"account": self.account.to_json()} if self.account is not None else {}),
            **self.extra,
        }


def workspace_policy(ws: Workspace) -> list[str]:
    """Sentences of the workspace's policies (for grounding reviewers' rules in policy text)."""
    return policy_sentences(ws.policies_dir)


def workspace_skills(ws: Workspace) -> SkillSet:
    """The skills that parse without errors (a broken skill must not stop an import; validate reports it)."""
    return skills_left_out(ws)[0]


def skills_left_out(ws: Workspace) -> tuple[SkillSet, list[Problem]]:
    """The working tree's skills that load, and one warning per skill file left out (with its first error)."""
    skills, dropped = SkillSet.load_valid(SkillSet.read_dir(ws.skills_dir))
    return skills, [Problem(p.location, f"skill left out: {p.message}", "warning") for p in dropped]


def store(ws: Workspace, cases: Sequence[Case], out: Path | None, default_name: str, *, replace: bool) -> StoreResult:
    """Write `cases` to `out` (default `cases/<default_name>.yaml`), folding duplicates of any workspace case."""
    return store_cases(ws.cases_dir, out or ws.cases_dir / f"{default_name}.yaml", cases, replace=replace)


def seed_regression_pool(ws: Workspace, cases: Sequence[Case]) -> list[str]:
    """Add reviewer-approved cases to the regression pool R as passing on the checked-out commit.

    A reviewer approving the deployed agent's answer is a passing sample judged by a person, so it
    enters R through `RegressionPool.add` like an evaluated pass; the commit is the workspace's
    HEAD (the skill set in use when the log is imported), "" outside git. The skills used are not
    known from a log, so these cases are sampled into evaluations but are no skill's anchor.

    Returns:
        the ids added or refreshed.
    """
    from frames_cli.errors import GitError
    from frames_cli.evaluation.pool import RegressionPool
    from frames_cli.evaluation.runner import CaseResult, EvalReport

    approved = [c for c in cases if c.source.kind == APPROVED_KIND]
    if not approved:
        return []
    try:
        from frames_cli.gitstore.store import GitStore

        commit = GitStore(ws.root).resolve("HEAD")
    except GitError:
        commit = ""
    pool = RegressionPool.load(ws)
    report = EvalReport([CaseResult(c.id, c.category, 0, True, "approved by a reviewer") for c in approved])
    added = pool.add(report, commit)
    pool.save()
    return added


def attach_priors(
    ws: Workspace, config: FramesConfig, advice: Sequence[tuple[Prior, str | None]]
) -> tuple[Priors | None, list[tuple[str, list[str]]]]:
    """Attach advice to the matching skills, in memory; `save_priors(ws.root, priors)` writes it.

    Split from the write so a bad `priors.yaml` stops an import before any case file is written.

    Returns:
        (the updated priors, None when there is no advice; per advice, its text and the skills it
        went to, empty for unmatched).

    Raises:
        InputError: `priors.yaml` is malformed.
    """
    if not advice:
        return None, []
    priors = load_priors(ws.root)
    matcher = SkillMatcher(workspace_skills(ws), config.ingest.prior_min_score, config.ingest.prior_max_skills)
    placed = attach(priors, matcher, [p for p, _ in advice], [hint for _, hint in advice])
    return priors, [(p.text, skills) for (p, _), skills in zip(advice, placed)]


def coverage(ws: Workspace, config: FramesConfig, cases: Sequence[Case] | None = None) -> Coverage:
    """Which policy sections and unlinked skills the workspace's cases cover.

    Unreviewed generated cases count as coverage: the generator must not ask again for a section
    whose cases wait for review.

    Raises:
        InputError: a policy document cannot be read.
    """
    if cases is None:
        from frames_cli.formats.case_files import check_case_files

        cases = check_case_files(case_files(ws.cases_dir, "*"))[0]
    units = section_units(read_policies(ws.root, ws.policies_dir)) + skill_units(workspace_skills(ws))
    return compute_coverage(units, cases, config.ingest.evidence_match)


def feedback_status(ws: Workspace, config: FramesConfig) -> dict[str, Any]:
    """What `frames status` shows about feedback: cases per source and what no case covers.

    Returns:
        ``{"cases_by_source": {kind: n}, "unreviewed": n (cases that wait for a person: `reviewed:
        false` or `review: needed`), "uncovered": [{"ref", "heading"}] | None,
        "awaiting_review": [{"ref", "heading"}] | None}``; `awaiting_review` lists the units only
        cases waiting for review (`reviewed: false`) cover, so that no counted case covers them yet;
        a case counts once for each distinct source kind it came from (its source and `also_from`);
        `uncovered` is None when a policy document cannot be read (`frames validate` says why).
    """
    from frames_cli.formats.case_files import check_case_files

    cases = check_case_files(case_files(ws.cases_dir, "*"))[0]
    by_source = Counter(kind for c in cases for kind in {c.source.kind, *(s.kind for s in c.also_from)})
    uncovered: list[dict[str, str]] | None
    awaiting: list[dict[str, str]] | None
    try:
        found = [{"ref": u.ref, "heading": u.heading} for u in coverage(ws, config, cases).uncovered()]
        # What no counted case covers yet: generated cases waiting for review cover a section for
        # the generator, but not for evaluation.
        counted = [
            {"ref": u.ref, "heading": u.heading}
            for u in coverage(ws, config, [c for c in cases if c.counts]).uncovered()
        ]
        uncovered, awaiting = found, [u for u in counted if u not in found]
    except InputError:
        uncovered = awaiting = None
    return {
        "cases_by_source": dict(sorted(by_source.items())),
        "unreviewed": sum(1 for c in cases if not c.counts),
        "uncovered": uncovered,
        "awaiting_review": awaiting,
    }


def generate(
    ws: Workspace, config: FramesConfig, units: Sequence[Unit], limit: int, kind: str, ref_prefix: str = ""
) -> CaseGenerator:
    """Ask the generator model for at most `limit` cases testing `units`.

    Returns:
        the finished generator: `cases` (validated), `problems` (failed calls, dropped cases) and
        `usage` (tokens and USD of its calls).

    Raises:
        ConfigError: `models.generator` is not set.
        BudgetExceeded: the run's budget ran out.
    """
    from frames_cli.formats.case_files import check_case_files
    from frames_cli.llm.client.client import ModelClient

    categories = sorted({c.category for c in check_case_files(case_files(ws.cases_dir, "*"))[0]})
    with ModelClient(ws, config) as client:
        generator = CaseGenerator(
            client.chat_many, config.ingest.evidence_match, config.ingest.generated_per_section, kind, ref_prefix
        )
        generator.generate(units, categories, limit)
    return generator
