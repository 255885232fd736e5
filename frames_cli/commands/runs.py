"""`frames runs`: every evolve run of the workspace with status, rounds, spend and best pass rate."""

from __future__ import annotations

import typer

from frames_cli.commands.common import JsonOption, RepoOption, guarded


def register(app: typer.Typer) -> None:
    """Add `frames runs` to `app`."""

    @app.command("runs")
    @guarded
    def runs(repo: RepoOption = None, json_out: JsonOption = False) -> None:
        """List the runs in .frames/runs/, oldest first: status, start time, rounds, tokens and USD
        spent, pass rate of S0 and of the best front member (--json adds candidates, front size and
        the review branch). A damaged run record is reported on stderr and skipped. Exit 0."""
        from frames_cli.commands.output import console, emit_json, err_console
        from frames_cli.evolution.records import list_runs
        from frames_cli.evolution.report import pct, usd
        from frames_cli.formats.problems import Problem
        from frames_cli.workspace.layout import Workspace

        ws = Workspace.open(repo)
        problems: list[Problem] = []
        summaries = list_runs(ws, problems)
        for problem in problems:
            err_console().print(f"warning: {problem.location}: {problem.message}", markup=False)
        if json_out:
            emit_json([s.to_json() for s in summaries])
            return
        if not summaries:
            console().print("No runs yet (start one with `frames evolve`).")
            return
        from rich.table import Table

        table = Table(title="frames runs", title_justify="left")
        for name in ("run", "status", "started (UTC)", "rounds", "tokens", "USD", "pass rate S0 → best"):
            numeric = name in ("rounds", "tokens", "USD")
            table.add_column(name, justify="right" if numeric else "left", no_wrap=name in ("run", "started (UTC)"), overflow="fold")
        for s in summaries:
            status = s.status + (f" ({s.stop_reason})" if s.stop_reason else "")
            best = f"{pct(s.base_pass_rate)} → {pct(s.best_pass_rate)}" + (f" ({s.best_id})" if s.best_id else "")
            table.add_row(s.run_id, status, s.started[:16].replace("T", " "), str(s.rounds), f"{s.spend_tokens:,}", usd(s.spend_usd), best)
        console().print(table)
