"""The deploy menu (`frames front`, the end of `frames evolve`, the run reports): the Pareto-front members compared with S0."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from frames_cli.evolution.formatting import label, pct, tokens, usd
from frames_cli.evolution.records import BASE_ID, Candidate, RunState
from frames_cli.gitstore.store import SKILLS_PREFIX, DiffStat, GitStore

if TYPE_CHECKING:
    from rich.table import Table


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


def set_sizes(state: RunState) -> dict[str, int]:
    """Cases per set of a run that holds sets out ({set: cases}, sets with cases only, in
    splits.SETS order); {} for a run on the paper's single set E or recorded before sets existed."""
    from frames_cli.evolution.splits import SETS

    split = state.checkpoint.get("split") or {}
    if split.get("paper", True):
        return {}
    return {name: len(split.get(name, [])) for name in SETS if split.get(name)}


def set_counts_cells(state: RunState) -> tuple[list[str], list[list[str]]] | None:
    """Cases per set and category as table cells (header, rows, a total row last); None when the
    run has no split recorded. A category kept whole counts in both the diagnosis and the selection set."""
    from frames_cli.evolution.splits import SETS

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
    rows = [[cat + (" (kept whole)" if cat in whole else ""), *(str(counts[n].get(cat, 0)) for n in names)] for cat in cats]
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


def menu_cells(state: RunState, rows: list[MenuRow]) -> tuple[list[str], list[list[str]]]:
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
        ("on the front", lambda r: "yes" if r.candidate.id in on_front else "no (reference)"),
        ("pass rate" + (" (selection set)" if sizes else ""), lambda r: pct(r.candidate.pass_rate)),
        ("Δ vs S0", lambda r: delta(r.candidate)),
        *((f"  {names[name]} ({n} cases)", on_set(name)) for name, n in sizes.items()),
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

    header, cells = menu_cells(state, rows)
    table = Table(title=f"Pareto front of run {state.run_id} ({state.status})", title_justify="left")
    for i, name in enumerate(header):
        table.add_column(name, justify="left" if i == 0 else "right", no_wrap=i == 0, overflow="fold")
    for row in cells:
        table.add_row(*row)
    return table


def menu_json(state: RunState, rows: list[MenuRow]) -> dict[str, Any]:
    """The deploy menu as JSON: run id, status, base, categories, S0's results and the front rows."""
    base = state.base_candidate()
    return {
        "run_id": state.run_id,
        "status": state.status,
        "base": state.base,
        "categories": categories(state),
        "s0": {"pass_rate": base.pass_rate, "per_category": base.per_category, "mean_tokens": base.mean_tokens,
               "sets": base.sets} if base else None,
        "sets": (state.checkpoint.get("split") or {}).get("counts", {}),
        "front": [row.to_json() for row in rows],
        "branch": state.branch,
    }
