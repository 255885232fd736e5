"""`frames evolve`: run (or resume) the evolution loop and print the deploy menu."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from frames_cli.commands.common import JsonOption, NoCacheOption, RepoOption, guarded
from frames_cli.errors import EXIT_RUNTIME
from frames_cli.workspace.config import setting_range

if TYPE_CHECKING:
    from types import TracebackType

    from rich.console import Console
    from rich.progress import TaskID

    from frames_cli.evolution.run.driver import EvolveOutcome
    from frames_cli.evolution.state.events import Event
    from frames_cli.evolution.state.records import RunState
    from frames_cli.workspace.layout import Workspace

# Conventional shell codes for a run stopped by a signal (128 + signal number); a stop file or a
# stopping rule is a normal end (0).
_SIGNAL_EXIT = {"SIGINT": 130, "SIGTERM": 143}


def register(app: typer.Typer) -> None:
    """Add `frames evolve` to `app`."""

    @app.command("evolve", short_help="The main job: evolve the skills into gated candidates.")
    @guarded
    def evolve(
        repo: RepoOption = None,
        base: Annotated[str, typer.Option("--base", help="Revision whose skills are S0.")] = "HEAD",
        resume: Annotated[
            str | None, typer.Option("--resume", help="Resume this run id.", show_default=False)
        ] = None,
        max_rounds: Annotated[
            int | None,
            typer.Option(
                "--max-rounds", min=1, max=setting_range("evolution", "max_rounds")[1],
                help="Override evolution.max_rounds.", show_default=False,
            ),
        ] = None,
        seed: Annotated[
            int | None,
            typer.Option(
                "--seed", min=0, max=setting_range("evolution", "seed")[1],
                help="Override evolution.seed (new runs; a resumed run keeps its seed).", show_default=False,
            ),
        ] = None,
        no_cache: NoCacheOption = False,
        force: Annotated[
            bool,
            typer.Option(
                "--force",
                help=(
                    "Start a new run even when the last finished run already evolved this base with these cases and "
                    "settings."
                ),
            ),
        ] = False,
        estimate: Annotated[
            bool,
            typer.Option(
                "--estimate",
                help=(
                    "Print the calls, tokens and price a new run will make at most, and exit; no model call, nothing "
                    "written."
                ),
            ),
        ] = False,
        json_out: JsonOption = False,
    ) -> None:
        """Evolve the skills: diagnose failures, vote, rewrite, gate per category against S0, keep the Pareto front.

        Never touches your branch, index or working tree: candidates are commits under
        `refs/frames/runs/<run>/`, the best one becomes branch `frames/<run>`. Resumes an unfinished run
        of the same base without paying again for finished model calls (it keeps its seed: a
        different `--seed` is refused with exit 2; `--max-rounds` is honoured). When the latest
        finished run already evolved the same base commit with the same cases and settings, it
        prints one line (`up to date: run <id> ...`) and exits 0 without a run (`--force` starts one
        anyway), so it can run from cron. Stops after
        `evolution.patience` rounds without a new front member, at `evolution.max_rounds`, when the
        budget is spent, on `touch .frames/STOP`, or on SIGINT/SIGTERM (after the current step).
        A new run first prints its estimate (calls at most, tokens, price where litellm knows it) and
        a warning when that exceeds `budget.*`; `--estimate` prints it and stops there.

        With `llm.batch` each stage's calls go to the provider's batch API (about half the price):
        the run stops with exit 75 and a line naming the batches it waits for and since when, and a
        later `frames evolve` (the next cron tick) goes on from their answers.

        Exit codes: 0 done, 1 run-time failure or the budget spent (the run ends with the front and
        reports it made, as `frames eval` ends on it with 1), 2 bad input, 75 another run holds the
        lock or a provider batch is still running, 130/143 stopped by SIGINT/SIGTERM (resumable).
        """
        from frames_cli.commands.output import emit_json, err_console
        from frames_cli.evolution.report.menu import menu_json
        from frames_cli.evolution.run.driver import EvolveOptions
        from frames_cli.evolution.run.driver import evolve as run_evolve
        from frames_cli.workspace.layout import Workspace

        ws = Workspace.open(repo)
        options = EvolveOptions(
            base=base, resume=resume, max_rounds=max_rounds, seed=seed, use_cache=not no_cache, force=force
        )
        if estimate:
            from frames_cli.commands.output import print_estimate
            from frames_cli.evolution.run.driver import estimate as estimate_run

            print_estimate(estimate_run(ws, options), ws.config(), json_out)
            return
        with RunProgress(err_console(), quiet=json_out) as bar:
            outcome = run_evolve(ws, options, on_event=bar.event, progress=bar.advance)
        state = outcome.state
        if outcome.up_to_date:
            _print_up_to_date(state, json_out)
            return
        if json_out:
            emit_json(
                {
                    **menu_json(state, outcome.menu), "up_to_date": False, "branch": outcome.branch,
                    "resumed": outcome.resumed, "status": state.status, "stop_reason": state.stop_reason,
                    "reports": {k: str(v) for k, v in outcome.reports.items()},
                }
            )
        else:
            _print_outcome(outcome, ws)
        if state.status == "stopped" and state.stop_reason in _SIGNAL_EXIT:
            raise typer.Exit(_SIGNAL_EXIT[state.stop_reason])
        if state.stop_reason == "budget":
            # As `frames eval` ends on a spent budget: exit 1, after the front and reports it made.
            err_console().print(
                f"error: the budget is spent ({state.spend_tokens:,} tokens): the run ended before its stopping rules "
                "did; its front and reports are above; raise budget.max_tokens or budget.max_usd for a longer run",
                markup=False, soft_wrap=True,
            )
            raise typer.Exit(EXIT_RUNTIME)


def _print_up_to_date(state: RunState, json_out: bool) -> None:
    """The one line (or JSON object) of a base already evolved with these cases and settings."""
    from frames_cli.commands.output import console, emit_json

    if json_out:
        emit_json(
            {
                "up_to_date": True, "run_id": state.run_id, "base": state.base,
                "fingerprint": state.fingerprint, "status": state.status, "branch": state.branch,
            }
        )
        return
    console().print(
        f"up to date: run {state.run_id} already evolved {state.base[:12]} with these cases and settings; "
        "use --force for a new run",
        markup=False, soft_wrap=True,
    )


def _print_outcome(outcome: EvolveOutcome, ws: Workspace) -> None:
    """The deploy menu, how the run ended, its review branch (or why there is none) and what to do next."""
    from rich.text import Text

    from frames_cli.commands.output import console, print_trimmed
    from frames_cli.evolution.decide.recommend import declined, headline
    from frames_cli.evolution.report.menu import print_menu
    from frames_cli.formatting import plural

    state, out = outcome.state, console()
    print_menu(out, state, outcome.menu)
    stop = f"{state.status} ({state.stop_reason})" if state.stop_reason else state.status
    out.print(
        f"run {state.run_id}: {stop}; {plural(state.round, 'round')}, {state.spend_tokens:,} tokens", markup=False
    )
    best, rec = state.best(), state.recommended()
    finished = state.status == "finished"
    if finished:
        print_trimmed(Text(f"pass rate {headline(state)}"))
    if outcome.branch and best is not None:
        pending = " (pending: waits for new cases)" if rec is not None and rec.status == "pending" else ""
        out.print(f"review branch: {outcome.branch}{pending}  (frames review {state.run_id}/{best.id})", markup=False)
    elif finished and rec is not None and rec.budget_spent:
        out.print("the budget ran out before the recommendation was decided; no review branch was made")
    elif finished and declined(state):
        out.print("no front member beat S0 by more than noise; no review branch was made")
    elif finished:
        out.print("no candidate beat S0; no review branch was made")
    if state.status == "stopped":
        out.print("the run is resumable: run `frames evolve` again")
    for line in closing_lines(state, outcome.reports, ws):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def closing_lines(state: RunState, reports: dict[str, Path], ws: Workspace) -> list[str]:
    """The last lines of `frames evolve`: where the report is, the review command for the member to
    look at first (the recommended one is on the review-branch line already; else the front's
    highest pass rate), `frames publish` when there is a review branch, and `frames report`."""
    best = state.best()
    if best is None or best.parent_id is None:
        members = [state.candidate(cid) for cid in state.front]
        children = [c for c in members if c.parent_id is not None]
        best = max(children, key=lambda c: (c.pass_rate or 0.0, -(c.mean_tokens or 0.0))) if children else None
    lines = []
    if "markdown" in reports:
        lines.append(f"report: {ws.relative(reports['markdown'])} (what happened and what to do next)")
    if state.branch:
        lines.append("to open a pull request of the review branch: frames publish [REMOTE]")
    elif best is not None:
        lines.append(f"review: frames review {state.run_id}/{best.id}")
    lines.append(f"whole run as one HTML page: frames report {state.run_id}")
    return lines


class RunProgress:
    """Progress on stderr: each loop event as a line, and a bar for the evaluation in progress."""

    def __init__(self, console: Console, quiet: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = console
        self.quiet = quiet
        self.bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[tokens]}", markup=False), TimeElapsedColumn(),
                            console=console, transient=True, disable=quiet)
        self.task: TaskID | None = None
        self.label = "evaluating"

    def __enter__(self) -> RunProgress:
        self.bar.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.bar.__exit__(exc_type, exc, traceback)

    def event(self, event: Event) -> None:
        """A loop event: printed; the bar of the previous evaluation goes. A new bar appears with the
        first count of the evaluation the event announces, so it never shows an unknown total (0/?).

        Warnings (`RunWarning`) are printed with `--json` too (on stderr, so the JSON stays clean).
        Events carry case and category names, so they are printed without rich markup.
        """
        from frames_cli.evolution.state.run_warnings import RunWarning

        message = str(event)
        if self.quiet:
            if isinstance(event, RunWarning):
                self.console.print(message, markup=False, highlight=False, soft_wrap=True)
            return
        self.console.print(message, style="dim", markup=False, highlight=False)
        if self.task is not None:
            self.bar.remove_task(self.task)
            self.task = None
        self.label = message

    def advance(self, done: int, total: int, tokens: int = 0) -> None:
        """Cases checked so far in the current evaluation, and the run's tokens so far."""
        if self.quiet:
            return
        if self.task is None:
            self.task = self.bar.add_task(self.label, total=total, tokens="")
        self.bar.update(self.task, completed=done, total=total, tokens=f"{tokens:,} tokens")
