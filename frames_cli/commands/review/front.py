"""`frames front [RUN]`: the deploy menu, the Pareto front of a run (the newest by default)."""

from __future__ import annotations

from typing import Annotated

import typer

from frames_cli.commands.common import JsonOption, RepoOption, guarded


def register(app: typer.Typer) -> None:
    """Add `frames front` to `app`."""

    @app.command("front", short_help="A run's deploy menu: its Pareto front.")
    @guarded
    def front(
        run: Annotated[
            str | None,
            typer.Argument(help="Run id (default: the newest run, the one started last).", show_default=False),
        ] = None,
        repo: RepoOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Show the deploy menu: every Pareto-front member of a run with its pass rate overall and
        per category, mean tokens per case, cost, the skills it changes and its diff size against
        S0 (★ marks the best). Without RUN, the newest run: the one started last (the last line of
        `frames runs`), not the highest id. Exit 0, 2 when there is no such run."""
        from rich.text import Text

        from frames_cli.commands.output import console, emit_json, print_trimmed
        from frames_cli.errors import InputError
        from frames_cli.evolution.decide.recommend import declined
        from frames_cli.evolution.report.menu import deploy_menu, menu_json, print_menu
        from frames_cli.evolution.state.run_ids import BASE_ID
        from frames_cli.evolution.state.runs import load_run, newest_run
        from frames_cli.formatting import plural
        from frames_cli.gitstore.store import GitStore
        from frames_cli.workspace.layout import Workspace

        ws = Workspace.open(repo)
        state = newest_run(ws, problems=[]) if run is None else load_run(ws, run)
        if state is None:
            raise InputError(f"no runs yet in {ws.relative(ws.runs_dir)} (run `frames evolve` first)")
        rows = deploy_menu(state, GitStore(ws.root))
        if json_out:
            emit_json(menu_json(state, rows))
            return
        out = console()
        base = state.base_candidate()
        out.print(
            f"Run {state.run_id}: {state.status}, {plural(state.round, 'round')}, base {state.base[:12]}", markup=False
        )
        print_menu(out, state, rows)
        best = state.best()
        if best is not None and best.id != BASE_ID:
            out.print(f"Review the best: frames review {state.run_id}/{best.id}")
            out.print(f"Make it a branch: frames promote {state.run_id}/{best.id}")
        elif declined(state):
            # Prose, not a command to copy: wrapped at the terminal's width, without rich's padding.
            print_trimmed(
                Text("No front member beat S0 by more than noise (see the ★ note above): S0 is still the best.")
            )
        elif base is not None:
            out.print("No child has joined the front yet: S0 is still the best.")
