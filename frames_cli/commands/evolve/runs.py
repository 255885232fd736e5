"""`frames runs`: every evolve run of the workspace with status, rounds, spend and best pass rate."""

from __future__ import annotations

import typer

from frames_cli.commands.common import JsonOption, RepoOption, guarded


def register(app: typer.Typer) -> None:
    """Add `frames runs` to `app`."""

    @app.command("runs", short_help="List the runs: status, rounds, spend, best pass rate.")
    @guarded
    def runs(repo: RepoOption = None, json_out: JsonOption = False) -> None:
        """List the runs in .frames/runs/, oldest first: status, rounds, tokens and USD spent, pass
        rate of S0 and of the recommended member with the cases n it is over and the recommendation's
        status (final, pending, unconfirmed, withdrawn), then each run's evidence in words (a run id
        begins with its UTC start time; --json adds the start time, candidates, front size and the review branch). Runs
        are ordered by start time, runs started in the same second by their last state write; the last one listed is the
        newest run, the default of `frames front`. A damaged run record is reported on stderr and skipped. Exit 0."""
        from frames_cli.commands.output import console, emit_json, err_console
        from frames_cli.evolution.state.runs import list_runs
        from frames_cli.formatting import pct, sample_size, usd
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
        from rich import box
        from rich.table import Table

        # Fits 80 columns: no side borders, no cell wraps mid-word (the stop reason and the best
        # candidate go on a second line), no start-time column (the run id starts with it).
        table = Table(
            title="frames runs", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
            collapse_padding=True,
        )
        for name in ("run", "status", "rounds", "tokens", "USD", "pass rate\nS0 → best"):
            table.add_column(name, justify="right" if name in ("rounds", "tokens", "USD") else "left", no_wrap=True)
        for s in summaries:
            status = s.status + (f"\n({s.stop_reason})" if s.stop_reason else "")
            under = ", ".join(x for x in (s.best_id, sample_size(s.n_cases, s.samples)) if x)
            best = f"{pct(s.base_pass_rate)} → {pct(s.best_pass_rate)}" + (f"\n({under})" if under else "")
            if s.recommendation not in (None, "none"):
                best += f"\n{s.recommendation}"
            table.add_row(s.run_id, status, str(s.rounds), _short_count(s.spend_tokens), usd(s.spend_usd), best)
        console().print(table)
        from rich.text import Text

        from frames_cli.commands.output import print_trimmed

        # The evidence in words, one paragraph per decided run (too long for a cell at 80 columns).
        for s in summaries:
            if s.evidence:
                print_trimmed(Text(f"{s.run_id}: {s.evidence}"))


def _short_count(n: int) -> str:
    """`n` in at most 6 characters: 9,999 / 443k / 12.4M."""
    if n < 10_000:
        return f"{n:,}"
    return f"{n / 1000:.0f}k" if n < 999_500 else f"{n / 1_000_000:.1f}M"
