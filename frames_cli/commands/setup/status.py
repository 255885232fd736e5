"""`frames status`: skills, cases per category, policy coverage, stale skills and the last run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from frames_cli.commands.common import JsonOption, RepoOption, guarded

if TYPE_CHECKING:
    from rich.console import Console

    from frames_cli.workspace.health import Health
    from frames_cli.workspace.layout import Workspace


def _last_run(ws: Workspace) -> dict[str, Any] | None:
    """The newest run's summary (`RunSummary.to_json()`); None when there is no run."""
    from frames_cli.evolution.state.records import RunSummary
    from frames_cli.evolution.state.runs import newest_run

    state = newest_run(ws, problems=[])
    return RunSummary.of(state).to_json() if state else None


def status_data(ws: Workspace, health: Health) -> dict[str, Any]:
    """The status as plain data (what `--json` prints)."""
    return {
        "root": str(ws.root),
        "skills": len(health.skills),
        "skill_names": list(health.skills),
        "edited_since_coldstart": health.edited,
        "stale": health.stale,
        "stale_links": [link.to_json() for link in _stale_links(ws, health)],
        "cases_by_category": health.cases_by_category,
        "coverage": [fc.to_json() for fc in health.coverage],
        "errors": len(health.errors),
        "warnings": len(health.warnings),
        "last_run": _last_run(ws),
        "disputed": _disputed(ws),
        "pending_branches": _pending(ws),
        **_feedback(ws),
    }


def _pending(ws: Workspace) -> list[dict[str, Any]]:
    """Review branches waiting for cases added after their run (evolution/decide/prospective.py), with how
    many new cases are in and how many their next look needs; [] when the cases cannot be read."""
    from frames_cli.errors import FramesError
    from frames_cli.evolution.decide.prospective import waiting
    from frames_cli.evolution.state.runs import load_runs
    from frames_cli.evolution.state.splits import load_split_cases

    try:
        cases, sealed = load_split_cases(ws.root, ws.config())
    except FramesError:
        return []
    waits = (waiting(state, cases, sealed) for state in load_runs(ws, problems=[]))
    return [w.to_json() for w in waits if w is not None]


def _disputed(ws: Workspace) -> list[dict[str, Any]]:
    """Cases a diagnoser said are mislabelled and nobody decided yet (evolution/state/disputes.py), with
    the policy passage cited; a case whose file cannot be read is left out here (validate names it)."""
    from frames_cli.errors import InputError
    from frames_cli.evolution.state.disputes import load_disputes, open_disputes
    from frames_cli.formats.case_files import case_files, load_cases

    disputes = load_disputes(ws)
    if not disputes:
        return []
    try:
        cases = {c.id: c for c in load_cases(case_files(ws.root, ws.config().eval.cases))}
    except InputError:
        return []
    return [{"case_id": cid, **rec} for cid, rec in open_disputes(cases, disputes).items()]


def _stale_links(ws: Workspace, health: Health) -> list[Any]:
    """The back-links of stale skills with the policy lines that changed (workspace/amendments.py)."""
    from frames_cli.workspace.amendments import working_tree_stale_links

    return working_tree_stale_links(ws, [health.skills[name] for name in health.stale if name in health.skills])


def _feedback(ws: Workspace) -> dict[str, Any]:
    """Cases per source, unreviewed generated cases and uncovered policy sections (ingest/feedback/pipeline.py)."""
    from frames_cli.ingest.feedback.pipeline import feedback_status

    return feedback_status(ws, ws.config())


def _print(data: dict[str, Any]) -> None:
    from frames_cli.commands.output import console
    from frames_cli.formatting import plural

    out = console()
    out.print(f"workspace {data['root']}")
    out.print(f"skills: {data['skills']} ({len(data['edited_since_coldstart'])} edited since coldstart)")
    _print_stale(out, data)
    _print_cases(out, data)
    for fc in data["coverage"]:
        out.print(
            f"policy {fc['file']}: {fc['covered_once']}/{fc['content_lines']} content lines covered by exactly one "
            "skill"
        )
    _print_runs(out, data)
    out.print(f"{plural(data['errors'], 'error')}, {plural(data['warnings'], 'warning')} (details: frames validate)")


def _print_stale(out: Console, data: dict[str, Any]) -> None:
    """The stale skills, each stale back-link with its changed lines, and what to do."""
    from rich.markup import escape

    if data["stale"]:
        out.print(
            "[yellow]stale skills (policy text changed since they were written):[/] "
            f"{escape(', '.join(data['stale']))}",
            markup=True,
        )
        for link in data["stale_links"]:
            out.print(
                f"  {link['skill']}: {link['file']}:{link['start']}-{link['end']} {link['heading']}".rstrip(),
                markup=False,
            )
            for line in link["changed"]:
                out.print(f"      {line}", markup=False)
        out.print("  the next `frames evolve` shows these lines to its diagnosers; or\n"
                  "  `frames coldstart` regenerates the skills from the new text (an edited skill\n"
                  "  only with --force, losing its edits)", markup=False)


def _print_cases(out: Console, data: dict[str, Any]) -> None:
    """Cases per category and per source, and the policy sections no case (or only unreviewed ones) covers."""
    from rich.table import Table

    cases = data["cases_by_category"]
    if cases:
        table = Table("category", "cases")
        for category, n in cases.items():
            table.add_row(category, str(n))
        out.print(table)
    else:
        out.print("cases: none")
    if data["cases_by_source"]:
        sources = ", ".join(f"{kind} {n}" for kind, n in data["cases_by_source"].items())
        out.print(
            f"cases by source: {sources}"
            + (f" ({data['unreviewed']} waiting for review)" if data["unreviewed"] else "")
        )
    if data["uncovered"]:
        out.print(f"policy sections no case covers ({len(data['uncovered'])}; `frames ingest generate` writes cases):")
        for unit in data["uncovered"]:
            out.print(f"  {unit['ref']} {unit['heading']}", markup=False)
    if data.get("awaiting_review"):
        out.print(f"policy sections only cases waiting for review cover ({len(data['awaiting_review'])}; they count\n"
                  "once a person sets `reviewed: true`):", markup=False)
        for unit in data["awaiting_review"]:
            out.print(f"  {unit['ref']} {unit['heading']}", markup=False)


def _print_runs(out: Console, data: dict[str, Any]) -> None:
    """Disputed labels, pending review branches and the last run."""
    from frames_cli.formatting import pct, plural, sample_size

    if data["disputed"]:
        out.print(f"disputed labels ({len(data['disputed'])}; out of every gate and front until the case file\n"
                  "sets `label: confirmed` or `label: disputed`):", markup=False)
        for d in data["disputed"]:
            out.print(
                f"  {d['case_id']} (run {d['run']}, round {d['round']}): contradicts {d['passage']!r}", markup=False
            )
    for wait in data["pending_branches"]:
        out.print(
            f"pending review branch {wait['branch'] or wait['run_id']} ({wait['member']}): {wait['new_cases']} of "
            f"{wait['needed']} new cases for its next look",
            markup=False,
        )
        out.print(f"  {wait['evidence']}", markup=False, soft_wrap=True)
    run = data["last_run"]
    if run:
        size = sample_size(run.get("n_cases"), run.get("samples", 1))
        counts = f"{plural(run['rounds'], 'round')}, {plural(run['candidates'], 'candidate')}"
        # Two lines: one was 97 characters, and a terminal of 80 broke it mid-phrase.
        out.print(f"last run {run['run_id']}: {run['status']}, {counts}", markup=False)
        if run.get("best_pass_rate") is not None:
            out.print(
                f"  best pass rate {pct(run['best_pass_rate'])} ({run['best_id']}{', ' + size if size else ''})",
                markup=False,
            )
        if run.get("evidence"):
            out.print(f"  {run['evidence']}", markup=False, soft_wrap=True)
    else:
        out.print("last run: none")


def register(app: typer.Typer) -> None:
    """Add `frames status` to `app`."""

    @app.command("status", short_help="Skills, stale skills, cases, policy coverage, last run.")
    @guarded
    def status(repo: RepoOption = None, json_out: JsonOption = False) -> None:
        """Show skills (and how many were edited since coldstart), stale skills, cases per category,
        policy coverage and the last run. Exit 0; 2 when the folder is not a workspace."""
        from frames_cli.commands.output import emit_json
        from frames_cli.workspace.health import inspect_workspace
        from frames_cli.workspace.layout import Workspace

        ws = Workspace.open(repo)
        data = status_data(ws, inspect_workspace(ws))
        if json_out:
            emit_json(data)
        else:
            _print(data)
