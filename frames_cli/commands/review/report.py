"""`frames report [RUN]`: the run as one self-contained HTML page with pictures, openable offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from frames_cli.commands.common import JsonOption, RepoOption, check_output_file, guarded, write_output

HTML_FILE = "report.html"


def register(app: typer.Typer) -> None:
    """Add `frames report` to `app`."""

    @app.command("report", short_help="A run as one HTML page, openable offline.")
    @guarded
    def report(
        run: Annotated[
            str | None,
            typer.Argument(help="Run id (default: the newest run, the one started last).", show_default=False),
        ] = None,
        out: Annotated[
            Path | None,
            typer.Option(
                "--out", metavar="FILE",
                help="Where to write the page (default: .frames/runs/<run>/report.html; `-`: print it).",
                show_default=False,
            ),
        ] = None,
        repo: RepoOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Write the HTML report of a run: the Pareto front (pass rate against tokens per case, S0 and
        every candidate, gate failures marked), pass rate per category per candidate with n, the
        rounds as a timeline with the reason of each round without a child, and each candidate's
        gate verdict, motivating cases, blueprint with policy back-links and diff. One file, no
        script, no network: open it in any browser. Exit 0; 2 when there is no such run or FILE
        cannot be written."""
        from frames_cli.commands.output import console, emit_json
        from frames_cli.errors import InputError
        from frames_cli.evolution.report.html_report import render_html_report
        from frames_cli.evolution.report.menu import deploy_menu
        from frames_cli.evolution.state.runs import load_run, newest_run, run_dir
        from frames_cli.gitstore.store import GitStore
        from frames_cli.workspace.layout import Workspace

        check_output_file(out, "--out")
        ws = Workspace.open(repo)
        state = newest_run(ws, problems=[]) if run is None else load_run(ws, run)
        if state is None:
            raise InputError(f"no runs yet in {ws.relative(ws.runs_dir)} (run `frames evolve` first)")
        store = GitStore(ws.root)
        page = render_html_report(ws, store, state, deploy_menu(state, store))
        path = out or run_dir(ws, state.run_id) / HTML_FILE
        write_output(path, page)
        if str(path) == "-":
            return
        if json_out:
            emit_json({"run_id": state.run_id, "path": str(path), "bytes": len(page.encode())})
        else:
            console().print(
                f"wrote {path} ({len(page.encode()) // 1024} KiB): open it in a browser; it needs no network",
                markup=False,
            )
