"""The deploy menu (`frames front`, the end of `frames evolve`,
the run reports): the Pareto-front members compared with S0."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frames_cli.evolution.decide.recommend import blind_cases, headline, recommendation_note
from frames_cli.evolution.state.records import Candidate, RunState
from frames_cli.formatting import pct, plural, tokens, usd, with_n
from frames_cli.gitstore.history import DiffStat
from frames_cli.gitstore.repo import SKILLS_PREFIX
from frames_cli.gitstore.store import GitStore

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def changed_skill_names(stat: DiffStat) -> list[str]:
    """Skill names whose files `stat` touches ("skills/<name>/..."), sorted."""
    return sorted(
        {f.path.split("/")[1] for f in stat.files if f.path.startswith(SKILLS_PREFIX) and f.path.count("/") >= 2}
    )


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
        cost in USD (null when the price is unknown), sets (scores per set: diagnosis, selection,
        test), then changed_skills, diff_size (lines), best."""
        c = self.candidate
        return {
            "id": c.id,
            "commit": c.commit,
            "round": c.round,
            "pass_rate": c.pass_rate,
            "per_category": c.per_category,
            "mean_tokens": c.mean_tokens,
            "cost_usd": c.cost_usd,
            "sets": c.sets,
            "case_counts": c.case_counts,
            "samples": c.samples,
            "changed_skills": self.changed_skills,
            "diff_size": self.diff_size,
            "best": self.best,
            "gain_p": c.gain_p,
        }


def deploy_menu(state: RunState, store: GitStore) -> list[MenuRow]:
    """The front members of `state`, each with its skills diff against S0 read from git, and the
    recommended member after them when it is off the front (a cheaper sibling with the same pass rate
    can dominate it): the menu always shows the member with the review branch.

    Raises:
        GitError: a candidate commit is missing from the repository.
    """
    best = state.best()
    rows = []
    members = state.front_candidates()
    if best is not None and best.parent_id is not None and best not in members:
        members.append(best)
    for cand in members:
        stat = store.diff_stat(state.base, cand.commit)
        rows.append(
            MenuRow(cand, changed_skill_names(stat), stat.lines_changed, best is not None and cand.id == best.id)
        )
    return rows


def set_sizes(state: RunState) -> dict[str, int]:
    """Cases per set of a run that holds sets out ({set: cases}, sets with cases only, in
    splits.SETS order); {} for a run on the paper's single set E or recorded before sets existed."""
    from frames_cli.evolution.state.splits import SETS

    split = state.checkpoint.get("split") or {}
    if split.get("paper", True):
        return {}
    return {name: len(split.get(name, [])) for name in SETS if split.get(name)}


def set_counts_cells(state: RunState) -> tuple[list[str], list[list[str]]] | None:
    """Cases per set and category as table cells (header, rows, a total row last); None when the
    run has no split recorded. A category kept whole counts in both the diagnosis and the selection set."""
    from frames_cli.evolution.state.splits import SETS

    split = state.checkpoint.get("split") or {}
    counts = split.get("counts") or {}
    if not counts:
        return None
    names = [n for n in SETS if counts.get(n)] or ["diagnosis"]
    whole = set(split.get("whole", []))
    titles = {"diagnosis": "diagnosis set", "selection": "selection set (gate, front)", "test": "sealed test set"}
    if split.get("paper"):
        titles["diagnosis"], titles["selection"] = "E (diagnosis)", "E (gate, front)"
    header = ["category", *(titles[n] for n in names)]
    cats = sorted({cat for n in names for cat in counts[n]})
    rows = [
        [cat + (" (kept whole)" if cat in whole else ""), *(str(counts[n].get(cat, 0)) for n in names)] for cat in cats
    ]
    rows.append(["all", *(str(sum(counts[n].values())) for n in names)])
    return header, rows


def sets_table(state: RunState) -> Table | None:
    """Cases per set and category as a rich table (None when the run recorded no split)."""
    from rich.table import Table

    cells = set_counts_cells(state)
    if cells is None:
        return None
    table = Table(title="Cases per set", title_justify="left")
    for i, name in enumerate(cells[0]):
        table.add_column(name, justify="left" if i == 0 else "right")
    for row in cells[1]:
        table.add_row(*row)
    return table


def categories(state: RunState) -> list[str]:
    """Every category any candidate of the run was scored on, sorted."""
    return sorted({cat for c in state.candidates for cat in c.per_category})


def menu_columns(state: RunState, rows: list[MenuRow]) -> list[MenuRow]:
    """The menu's columns: S0 first (for reference when it is off the front), then the other front members."""
    base = state.base_candidate()
    columns = [row for row in rows if row.candidate.parent_id is not None]
    s0_row = next((row for row in rows if row.candidate.parent_id is None), None)
    if base is not None:
        best = state.best()
        columns.insert(0, s0_row or MenuRow(base, [], 0, best is not None and best.id == base.id))
    return columns


def column_header(row: MenuRow) -> str:
    """A column's header: "S0" for the base (its id, r0c0, is in the notes), else the id; ★ the best."""
    return ("S0" if row.candidate.parent_id is None else row.candidate.id) + (" ★" if row.best else "")


def menu_cells(state: RunState, rows: list[MenuRow]) -> tuple[list[str], list[list[str]]]:
    """The deploy menu as text cells, one column per front member after S0 (shared by the rich and
    the Markdown table). Members are columns and measures are rows, because a run has a few front
    members but may have many categories. Each rate's row names its sample size (every column is
    scored on the same cases, E); lists that would not fit a cell (the changed skills) are in
    `menu_notes`, below the table."""
    base = state.base_candidate()
    columns = menu_columns(state, rows)
    header = [""] + [column_header(r) for r in columns]
    counts, k = (base.case_counts, base.samples) if base else ({}, 1)

    def delta(c: Candidate) -> str:
        if base is None or base.pass_rate is None or c.pass_rate is None:
            return "—"
        return f"{100 * (c.pass_rate - base.pass_rate):+.1f} pt"

    sizes = set_sizes(state)
    names = {"diagnosis": "diagnosis set", "selection": "selection set", "test": "sealed test set"}

    def on_set(name: str) -> Callable[[MenuRow], str]:
        def cell(r: MenuRow) -> str:
            scores = r.candidate.sets.get(name)
            if scores is None:
                return "not scored" if name == "test" and state.status != "finished" else "—"
            return pct(scores.get("pass_rate"))

        return cell

    measures: list[tuple[str, Callable[[MenuRow], str]]] = [
        (
            with_n("pass rate" + (", selection set" if sizes else ""), base.n_cases if base else None, k),
            lambda r: pct(r.candidate.pass_rate),
        ),
        ("Δ vs S0", lambda r: delta(r.candidate)),
        *(
            [("p, unseen cases", lambda r: "—" if r.candidate.gain_p is None else f"{r.candidate.gain_p:.3g}")]
            if state.recommend_alpha < 1 and blind_cases(state) else []
        ),
        *([("evidence", lambda r: evidence_cell(state, r.candidate))] if state.recommend_alpha < 1 else []),
        *((with_n(f"  {names[name]}", n, k), on_set(name)) for name, n in sizes.items()),
        *(
            (with_n(f"  {cat}", counts.get(cat), k), lambda r, cat=cat: pct(r.candidate.per_category.get(cat)))
            for cat in categories(state)
        ),
        ("tokens/case", lambda r: tokens(r.candidate.mean_tokens)),
        ("cost/eval", lambda r: usd(r.candidate.cost_usd)),
        ("skills changed", lambda r: str(len(r.changed_skills))),
        ("diff lines", lambda r: str(r.diff_size)),
    ]
    return header, [[name, *(cell(r) for r in columns)] for name, cell in measures]


def evidence_cell(state: RunState, cand: Candidate) -> str:
    """A member's evidence in a word or two for the menu: "branch (final)", "branch (pending)",
    "withdrawn", "significant", "noise", "not tested", "untested" (the budget ran out before the
    rule's samples); "—" for S0 and before the run's end decided."""
    rec = state.recommended()
    if rec is None or cand.parent_id is None:
        return "—"
    if rec.budget_spent:
        return "untested"
    if rec.member == cand.id:
        return "withdrawn" if rec.status == "withdrawn" else f"branch ({rec.status})"
    step = next((s for s in rec.steps if s.member == cand.id), None)
    if step is None:
        return "not tested"
    return "significant" if step.significant else "noise"


def _words(state: RunState) -> str | None:
    rec = state.recommended()
    return rec.words() if rec is not None else None


def menu_notes(state: RunState, rows: list[MenuRow]) -> list[str]:
    """The lines below the menu: what S0 and E are, and each member's changed skills against S0."""
    base = state.base_candidate()
    if base is None:
        return []
    on_front = any(row.candidate.parent_id is None for row in rows)
    size = base.n_cases
    cases = plural(size, "case") if size is not None else "its cases"
    samples = f" × {plural(base.samples, 'sample')}" if base.samples > 1 else ""
    notes = [
        f"S0 is {base.id}, the base commit {state.base[:12]}"
        + (", and is on the front." if on_front else ", shown for reference (it is not on the front).")
        + (" ★ marks the best member." if any(r.best for r in rows) else ""),
        (
            f"Rates, tokens and cost/eval are on the selection set ({cases}{samples}), where the gate and the front "
            "are computed; cost/eval is the executor's cost of one evaluation on it."
            if set_sizes(state)
            else f"Rates, tokens and cost/eval are on E, the run's evaluation set ({cases}{samples}); cost/eval is the "
            "executor's cost of one evaluation on it."
        ),
    ]
    why = recommendation_note(state)
    if why:
        notes.append(why)
    best = state.best()
    if best is not None and best.parent_id is not None and best.id not in state.front:
        from frames_cli.evolution.report.story import off_front_reason

        notes.append(
            f"{best.id} ★ is shown although it is off the front ({off_front_reason(state, best)}): the recommendation "
            "tests children by their diagnosis-set pass rate, older first on a tie, whatever their tokens."
        )
    changed = [row for row in menu_columns(state, rows) if row.changed_skills]
    if changed:
        notes.append("Skills changed against S0:")
        notes += [f"  {row.candidate.id}: {', '.join(row.changed_skills)}" for row in changed]
    return notes


def off_front_notes(state: RunState) -> list[str]:
    """ "Not on the front:" and one line per child candidate off the front with the reason (gate
    failure or who dominates it); [] when every child is on the front."""
    from frames_cli.evolution.report.story import off_front_reason

    off = [c for c in state.candidates if c.parent_id is not None and c.id not in state.front]
    return ["Not on the front:", *(f"  {c.id}: {off_front_reason(state, c)}" for c in off)] if off else []


def menu_tables(state: RunState, rows: list[MenuRow], width: int) -> list[Table]:
    """The deploy menu as rich tables no wider than `width` columns (terminal cells): as many member
    columns per table as fit, the measure names repeated in each, so no cell wraps or breaks a word."""
    from rich.console import Console
    from rich.table import Table

    header, cells = menu_cells(state, rows)
    measure = Console(width=10_000, file=None, color_system=None)

    def build(members: list[int]) -> Table:
        table = Table()
        # The measure names may fold (a category name longer than the terminal leaves room for);
        # the figures never do: a rate cut to "7…" is no rate.
        table.add_column(header[0], justify="left", overflow="fold")
        for i in members:
            table.add_column(header[i], justify="right", no_wrap=True)
        for row in cells:
            table.add_row(row[0], *(row[i] for i in members))
        return table

    from rich.cells import cell_len

    # A label wider than half the terminal folds (see build), so it counts for at most that much.
    label = max(cell_len(str(row[0])) for row in [header, *cells])
    spare = label - min(label, width // 2)

    tables, members = [], list(range(1, len(header)))
    while members:
        take = len(members)
        # Fewer members per table until it fits; one member always goes, however wide.
        while take > 1 and measure.measure(build(members[:take])).maximum - spare > width:
            take -= 1
        tables.append(build(members[:take]))
        members = members[take:]
    return tables or [build([])]


def menu_title(state: RunState) -> str:
    """The line above the menu."""
    return f"Pareto front of run {state.run_id} ({state.status})"


def print_menu(out: Console, state: RunState, rows: list[MenuRow]) -> None:
    """Print the deploy menu on `out` at its width: the title, the tables, the notes below them
    (wrapped at spaces, never inside a skill name) and the simulator notice when the run used it."""
    from frames_cli.llm.transport.providers import simulator_notice

    out.print(menu_title(state), markup=False)
    for table in menu_tables(state, rows, out.width):
        out.print(table)
    counts = sets_table(state)
    if counts is not None:
        out.print(counts)
    notice = simulator_notice(state.config.get("models", {}))
    for line in menu_notes(state, rows) + off_front_notes(state) + ([notice] if notice else []):
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        wrapped = textwrap.wrap(
            line, out.width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
        )
        for part in wrapped:
            out.print(part, markup=False, soft_wrap=True)


def menu_json(state: RunState, rows: list[MenuRow]) -> dict[str, Any]:
    """The deploy menu as JSON: run id, status, base, categories, S0's results (with its case counts
    per category and samples per case), the front rows (each with `gain_p`), `best` (the recommended
    member's id), `recommendation` (evidence.Recommendation JSON once decided, with `words`, `note` and
    `headline`: recommend.py), the review branch, and `simulator_notice`
    (the caveat when a role ran on frames-sim, else null)."""
    from frames_cli.llm.transport.providers import simulator_notice

    base, best = state.base_candidate(), state.best()
    return {
        "simulator_notice": simulator_notice(state.config.get("models", {})),
        "run_id": state.run_id,
        "status": state.status,
        "base": state.base,
        "categories": categories(state),
        "s0": {"pass_rate": base.pass_rate, "per_category": base.per_category, "mean_tokens": base.mean_tokens,
               "sets": base.sets, "case_counts": base.case_counts, "samples": base.samples} if base else None,
        "sets": (state.checkpoint.get("split") or {}).get("counts", {}),
        "front": [row.to_json() for row in rows],
        "best": best.id if best else None,
        "recommendation": {**(state.recommendation or {"alpha": state.recommend_alpha}), "words": _words(state),
                           "note": recommendation_note(state), "headline": headline(state)},
        "branch": state.branch,
    }
