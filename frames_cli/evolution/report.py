"""What people and CI read about a run: the deploy menu, a candidate's review, and the run reports.

Formats: rich tables for the terminal, Markdown (a pull-request description; the terminal review is
the same Markdown rendered by rich), JSON, and JUnit XML of the gate (one test case per category).
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from frames_cli.errors import InputError
from frames_cli.evolution.commit import gate_overrides
from frames_cli.evolution.records import BASE_ID, REPORT_FILES, Candidate, RunState, RunSummary, run_dir
from frames_cli.gitstore.store import SKILLS_PREFIX, DiffStat, GitStore
from frames_cli.workspace.atomic import atomic_write_json, atomic_write_text
from frames_cli.workspace.layout import Workspace

if TYPE_CHECKING:
    from rich.table import Table


def pct(rate: float | None) -> str:
    """A 0..1 rate as "62.5%"; "—" for None."""
    return "—" if rate is None else f"{100 * rate:.1f}%"


def tokens(value: float | None) -> str:
    """Mean tokens per case, rounded, with thousands separators; "—" for None."""
    return "—" if value is None else f"{value:,.0f}"


def usd(value: float | None) -> str:
    """USD with four decimals ("$0.0123"); "—" when the price is unknown."""
    return "—" if value is None else f"${value:.4f}"


def label(cand: Candidate) -> str:
    """The candidate id, marked "(S0)" for the base."""
    return f"{cand.id} (S0)" if cand.id == BASE_ID else cand.id


def changed_skill_names(stat: DiffStat) -> list[str]:
    """Skill names whose files `stat` touches ("skills/<name>/..."), sorted."""
    return sorted({f.path.split("/")[1] for f in stat.files if f.path.startswith(SKILLS_PREFIX) and f.path.count("/") >= 2})


@dataclass(frozen=True)
class MenuRow:
    """One front member in the deploy menu, compared with S0 (what deploying it would change).

    Attributes:
        candidate: the front member.
        changed_skills: skills that differ from S0's commit.
        diff_size: lines inserted plus deleted under skills/ against S0's commit.
        best: True for `RunState.best()`.
    """

    candidate: Candidate
    changed_skills: list[str]
    diff_size: int
    best: bool

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: the candidate's id, commit, round, pass rates (0..1), mean tokens per case and
        cost in USD (null when the price is unknown), then changed_skills, diff_size (lines), best."""
        c = self.candidate
        return {
            "id": c.id,
            "commit": c.commit,
            "round": c.round,
            "pass_rate": c.pass_rate,
            "per_category": c.per_category,
            "mean_tokens": c.mean_tokens,
            "cost_usd": c.cost_usd,
            "changed_skills": self.changed_skills,
            "diff_size": self.diff_size,
            "best": self.best,
        }


def deploy_menu(state: RunState, store: GitStore) -> list[MenuRow]:
    """The front members of `state`, each with its skills diff against S0 read from git.

    Raises:
        GitError: a candidate commit is missing from the repository.
    """
    best = state.best()
    rows = []
    for cand in state.front_candidates():
        stat = store.diff_stat(state.base, cand.commit)
        rows.append(MenuRow(cand, changed_skill_names(stat), stat.lines_changed, best is not None and cand.id == best.id))
    return rows


def categories(state: RunState) -> list[str]:
    """Every category any candidate of the run was scored on, sorted."""
    return sorted({cat for c in state.candidates for cat in c.per_category})


def _menu_cells(state: RunState, rows: list[MenuRow]) -> tuple[list[str], list[list[str]]]:
    """The deploy menu as text cells, one column per front member after S0 (shared by the rich and
    the Markdown table). Members are columns and measures are rows, because a run has a few front
    members but may have many categories."""
    base = state.base_candidate()
    columns = [row for row in rows if row.candidate.id != BASE_ID]
    s0_row = next((row for row in rows if row.candidate.id == BASE_ID), None)
    if base is not None:
        columns.insert(0, s0_row or MenuRow(base, [], 0, False))
    header = [""] + [label(r.candidate) + (" ★" if r.best else "") for r in columns]
    on_front = {row.candidate.id for row in rows}

    def delta(c: Candidate) -> str:
        if base is None or base.pass_rate is None or c.pass_rate is None:
            return "—"
        return f"{100 * (c.pass_rate - base.pass_rate):+.1f} pt"

    measures: list[tuple[str, Callable[[MenuRow], str]]] = [
        ("on the front", lambda r: "yes" if r.candidate.id in on_front else "no (reference)"),
        ("pass rate", lambda r: pct(r.candidate.pass_rate)),
        ("Δ vs S0", lambda r: delta(r.candidate)),
        *((f"  {cat}", lambda r, cat=cat: pct(r.candidate.per_category.get(cat))) for cat in categories(state)),
        ("tokens/case", lambda r: tokens(r.candidate.mean_tokens)),
        ("cost of one eval on E", lambda r: usd(r.candidate.cost_usd)),
        ("skills changed", lambda r: ", ".join(r.changed_skills) or "—"),
        ("diff lines", lambda r: str(r.diff_size)),
    ]
    return header, [[name, *(cell(r) for r in columns)] for name, cell in measures]


def menu_table(state: RunState, rows: list[MenuRow]) -> Table:
    """The deploy menu as a rich table: a column per front member (★ the best), S0 first for reference."""
    from rich.table import Table

    header, cells = _menu_cells(state, rows)
    table = Table(title=f"Pareto front of run {state.run_id} ({state.status})", title_justify="left")
    for i, name in enumerate(header):
        table.add_column(name, justify="left" if i == 0 else "right", no_wrap=i == 0, overflow="fold")
    for row in cells:
        table.add_row(*row)
    return table


def md_text(text: str) -> str:
    """`text` (from a person or a model) escaped for Markdown: shown as written, never as markup.

    Backslash escapes of ASCII punctuation are CommonMark's (spec 0.31, §2.4), which GitHub and
    rich's renderer follow; without them "approved by <ann>" lost "<ann>" as an HTML tag.
    """
    return re.sub(r"([\\`*_\[\]<>&#|~])", r"\\\1", text)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table (pipes in cells escaped)."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "|".join("---" for _ in header) + "|", *map(line, rows)])


def menu_json(state: RunState, rows: list[MenuRow]) -> dict[str, Any]:
    """The deploy menu as JSON: run id, status, base, categories, S0's results and the front rows."""
    base = state.base_candidate()
    return {
        "run_id": state.run_id,
        "status": state.status,
        "base": state.base,
        "categories": categories(state),
        "s0": {"pass_rate": base.pass_rate, "per_category": base.per_category, "mean_tokens": base.mean_tokens} if base else None,
        "front": [row.to_json() for row in rows],
        "branch": state.branch,
    }


@dataclass(frozen=True)
class SkillContext:
    """A changed skill as the reviewer needs it: where its rules come from and what it refers to.

    Attributes:
        name: the skill name.
        backlinks: "policies/airline.md:12-30 Heading path", with " (policy text changed since)"
            when the span's sha256 no longer matches the policy file in the working tree.
        references: names of other skills it refers to.
        problem: why the skill could not be read at the candidate commit ("" when it could).
    """

    name: str
    backlinks: list[str]
    references: list[str]
    problem: str = ""


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

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for `frames review --json`: the run, the three candidates (Candidate.to_json),
        the changed skills' context, the unified diff and its size in lines, trailers, promote,
        gate overrides."""
        return {
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
        }


def build_review(ws: Workspace, store: GitStore, state: RunState, cand: Candidate) -> Review:
    """Gather the review of `cand`: diff against its parent, changed skills' back-links, results.

    Raises:
        InputError: the run has no S0 yet (nothing was evaluated).
        GitError: a commit of the run is missing from the repository.
    """
    base = state.base_candidate()
    if base is None:
        raise InputError(f"run {state.run_id} has not evaluated S0 yet; nothing to review")
    parent = state.candidate(cand.parent_id) if cand.parent_id else None
    before = parent.commit if parent else cand.commit
    stat = store.diff_stat(before, cand.commit)
    names = sorted(set(cand.changed_skills) | set(changed_skill_names(stat)))
    files = store.read_files(cand.commit)
    skills = [_skill_context(ws, name, files) for name in names]
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
    )


def _skill_context(ws: Workspace, name: str, files: dict[str, bytes]) -> SkillContext:
    """Back-links (checked against the working tree's policy files) and references of skill `name`."""
    from frames_cli.formats.skill import parse_skill_bytes, text_sha256

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
    return SkillContext(name, rendered, skill.references)


def _results_cells(review: Review) -> tuple[list[str], list[list[str]]]:
    """Per-category results: S0, parent, candidate, the gate floor and verdict; then overall and tokens."""
    cand, parent, base = review.candidate, review.parent, review.base
    checks = {c["category"]: c for c in cand.gate_details.get("checks", [])}
    header = ["category", "S0", f"parent {parent.id}" if parent else "parent", cand.id, "floor (1−ε)·S0", "gate"]
    rows = []
    for cat in sorted(set(base.per_category) | set(cand.per_category)):
        check = checks.get(cat)
        verdict = "—" if check is None else ("pass" if check["passed"] else "**FAIL**")
        parent_rate = pct(parent.per_category.get(cat)) if parent else "—"
        floor = pct(check["floor"]) if check else "—"
        rows.append([cat, pct(base.per_category.get(cat)), parent_rate, pct(cand.per_category.get(cat)), floor, verdict])
    parent_overall = pct(parent.pass_rate) if parent else "—"
    rows.append(["**overall**", pct(base.pass_rate), parent_overall, pct(cand.pass_rate), "", ""])
    parent_tokens = tokens(parent.mean_tokens) if parent else "—"
    rows.append(["tokens/case", tokens(base.mean_tokens), parent_tokens, tokens(cand.mean_tokens), "", ""])
    return header, rows


def gate_line(cand: Candidate) -> str:
    """One line: the gate verdict with ε and the failing categories."""
    if cand.parent_id is None:
        return "S0 is the baseline; it is not gated"
    if not cand.gate_details and cand.gate_passed is None:
        return "not gated yet"
    eps = cand.gate_details.get("tolerance")
    failed = cand.failed_categories()
    rule = f"PR_c(child) ≥ (1 − ε)·PR_c(S0), ε = {eps:g}" if eps is not None else "PR_c(child) ≥ (1 − ε)·PR_c(S0)"
    if cand.gate_passed:
        return f"**pass** — every category at or above its floor ({rule})"
    return f"**FAIL** — below the floor in {', '.join(failed) or 'some category'} ({rule})"


def review_markdown(review: Review) -> str:
    """The review as Markdown: usable as a pull-request description, and what the terminal shows."""
    cand, parent = review.candidate, review.parent
    out = [
        f"## frames candidate {label(cand)} — run {review.run_id}",
        "",
        f"Commit `{cand.commit[:12]}`"
        + (f", child of {parent.id} (`{parent.commit[:12]}`)" if parent else "")
        + f", round {cand.round}. Pass rate {pct(parent.pass_rate if parent else None)} → {pct(cand.pass_rate)}"
        f" (S0 {pct(review.base.pass_rate)}); diff +{review.stat.insertions} −{review.stat.deletions} lines"
        f" in {len(review.skills)} skill(s).",
        "",
        f"**Gate:** {gate_line(cand)}",
        "",
    ]
    for o in review.gate_overrides:
        out += [f"**Gate overridden** by {md_text(o['by'])} at {o['at']} (branch `{o['branch']}`, failed: {', '.join(o['failed'])}): {md_text(o['reason'])}", ""]
    if "Frames-Models" in review.trailers:
        out += [f"Models: {review.trailers['Frames-Models']}", ""]
    out += [
        "### Results per category",
        "",
        markdown_table(*_results_cells(review)),
    ]
    out += ["", "### Failures that motivated it", ""]
    notes = {f.case_id: f for f in cand.failures}
    ids = cand.motivating_case_ids or sorted(notes)
    for case_id in ids:
        note = notes.get(case_id)
        if note is None:
            out.append(f"- `{case_id}`")
            continue
        symptom = f" — {md_text(note.symptom)}" if note.symptom else ""
        out.append(f"- `{case_id}` ({note.category}): {md_text(note.reason)}{symptom}")
    if not ids:
        out.append("- none recorded" + (" (S0 is the baseline)" if parent is None else ""))
    out += ["", "### Blueprint", "", "What the diagnosers proposed and the rewriter was asked to do; the diff below is what it wrote.", ""]
    out += _blueprint_lines(cand, {s.name: s for s in review.skills})
    out += ["", "### Diff", ""]
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", review.diff)), default=0))
    out += [f"{fence}diff", review.diff, fence] if review.diff else ["No change under skills/."]
    out += ["", f"To make a branch of it: `{review.promote}`", ""]
    return "\n".join(out)


def _blueprint_lines(cand: Candidate, skills: dict[str, SkillContext]) -> list[str]:
    """Per blueprint skill: votes, each change with its rationale, cases and diagnosers, back-links."""
    lines: list[str] = []
    votes_of = f" of {cand.diagnosers}" if cand.diagnosers else ""
    needed = f" (needed {cand.votes_needed})" if cand.votes_needed else ""
    for bp in cand.blueprints:
        kind = "new skill" if bp.get("new_skill") else "skill"
        lines.append(f"- **{kind} `{bp['skill']}`** — votes {bp.get('votes', '?')}{votes_of}{needed}")
        for change in bp.get("changes", []):
            cases = ", ".join(f"`{c}`" for c in change.get("case_ids", [])) or "none"
            lines.append(f"  - {md_text(change.get('change', ''))}")
            lines.append(f"    - why: {md_text(change.get('rationale') or 'no rationale given')}; cases {cases}")
        ctx = skills.get(bp["skill"])
        if ctx is not None:
            lines += [f"  - policy back-link: {link}" for link in ctx.backlinks] or ["  - policy back-links: none"]
            if ctx.references:
                lines.append(f"  - refers to: {', '.join(ctx.references)}")
            if ctx.problem:
                lines.append(f"  - note: {md_text(ctx.problem)}")
    lines += [f"- `{skill}`: change dropped ({why})" for skill, why in sorted(cand.dropped.items())]
    return lines or ["- none (no skill changed against the parent)"]


def gate_junit_xml(state: RunState, cand: Candidate | None = None) -> str:
    """JUnit XML of the gate of `cand` (default: the run's best front member), one test case per category.

    A category below its floor (1 − ε)·PR(S0) is a failed test case, so CI shows which category
    regressed. A candidate without gate checks (S0) gives a suite with no test cases.
    """
    cand = cand or state.best()
    suite_name = f"frames gate {state.run_id}/{cand.id}" if cand else f"frames gate {state.run_id}"
    checks = cand.gate_details.get("checks", []) if cand else []
    root = ET.Element("testsuites", name="frames")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=suite_name,
        tests=str(len(checks)),
        failures=str(sum(1 for c in checks if not c["passed"])),
        errors="0",
        skipped="0",
    )
    props = ET.SubElement(suite, "properties")
    for key, value in [("run", state.run_id), ("candidate", cand.id if cand else ""), ("commit", cand.commit if cand else ""),
                       ("tolerance", str(cand.gate_details.get("tolerance", "")) if cand else "")]:
        ET.SubElement(props, "property", name=key, value=value)
    for check in checks:
        case = ET.SubElement(suite, "testcase", classname="frames.gate", name=check["category"], time="0")
        numbers = f"S0 {pct(check['baseline'])}, candidate {pct(check['child'])}, floor {pct(check['floor'])}"
        if not check["passed"]:
            ET.SubElement(case, "failure", message=f"{check['category']} below the gate floor: {numbers}", type="GateFailure")
        ET.SubElement(case, "system-out").text = numbers
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def run_report_json(state: RunState, rows: list[MenuRow]) -> dict[str, Any]:
    """The machine-readable run report: summary, deploy menu and every candidate."""
    return {
        "summary": RunSummary.of(state).to_json(),
        "menu": menu_json(state, rows),
        "candidates": [c.to_json() for c in state.candidates],
    }


def run_report_markdown(state: RunState, rows: list[MenuRow]) -> str:
    """The run report in Markdown: what ended it, spend, the deploy menu and how to review."""
    from frames_cli.llm.providers import simulator_notice

    summary = RunSummary.of(state)
    best = state.best()
    lines = [
        f"# frames run {state.run_id}",
        "",
        f"Status **{state.status}**" + (f" ({state.stop_reason})" if state.stop_reason else "")
        + f" after {state.round} round(s); base `{state.base[:12]}`; {summary.candidates} child candidate(s).",
        f"Spend: {state.spend_tokens:,} tokens, {usd(state.spend_usd)}.",
        f"Pass rate S0 {pct(summary.base_pass_rate)} → best {pct(summary.best_pass_rate)}"
        + (f" ({best.id})" if best else "") + ".",
    ]
    if state.error:
        lines.append(f"Error: {state.error}")
    notice = simulator_notice(state.config.get("models", {}))
    if notice:
        lines += ["", f"> {notice}"]
    lines += ["", "## Deploy menu (Pareto front: pass rate vs mean tokens per case)", "", markdown_table(*_menu_cells(state, rows))]
    if best is not None and best.id != BASE_ID:
        lines += ["", f"Review the best: `frames review {state.run_id}/{best.id}`"]
        if state.branch:
            lines.append(f"Review branch: `{state.branch}`")
    return "\n".join(lines) + "\n"


def write_run_reports(ws: Workspace, store: GitStore, state: RunState) -> dict[str, Path]:
    """Write report.json, report.md and report.xml (the gate of the best member) into the run folder.

    Each file is written atomically. Returns {"json" | "markdown" | "junit": path}.

    Raises:
        GitError: a front member's commit is missing.
    """
    rows = deploy_menu(state, store)
    folder = run_dir(ws, state.run_id)
    paths = {kind: folder / name for kind, name in REPORT_FILES.items()}
    atomic_write_json(paths["json"], run_report_json(state, rows))
    atomic_write_text(paths["markdown"], run_report_markdown(state, rows))
    atomic_write_text(paths["junit"], gate_junit_xml(state))
    return paths
