"""`frames ingest KIND`: turn operational feedback into cases; one subcommand per converter.

Each converter adds one function to `SUBCOMMANDS`: it parses its own options, builds its
`Converter` and hands it to `ingest_feedback.run_converter`, which stores the cases through
`ingest/feedback/pipeline.py` (atomically, folding duplicates across sources, keeping the `created` stamps
of cases already in the file) and reports what was written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from frames_cli.commands.cases import ingest_feedback, ingest_generated
from frames_cli.commands.common import JsonOption, RepoOption, guarded

if TYPE_CHECKING:
    pass

OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out", help="Case file to write (.yaml or .jsonl); default: `cases/<source>.yaml` in the workspace.",
        show_default=False,
    ),
]


def tau2(
    tasks: Annotated[Path, typer.Option("--tasks", help="tau2-bench tasks.json of one domain.")],
    db: Annotated[
        Path, typer.Option("--db", help="The domain database: a folder with db.json or one `<table>.json` per table.")
    ],
    domain: Annotated[
        str | None, typer.Option("--domain", help="airline or retail; default: read from the tasks.")
    ] = None,
    task_ids: Annotated[list[str] | None, typer.Option("--task", help="Only this task id (repeatable).")] = None,
    exclude: Annotated[
        list[str] | None, typer.Option("--exclude-task", help="Leave this task id out (repeatable).")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Import nothing when any task cannot be converted (exit 2).")
    ] = False,
    out: OutOption = None,
    repo: RepoOption = None,
    json_out: JsonOption = False,
) -> None:
    """Convert tau2-bench tasks into cases (the customer's side as input, allowed write actions expected).

    A task that cannot be converted is skipped with `tasks.json:LINE: error: ...` (all or nothing with --strict).
    """
    from frames_cli.ingest.cases.dedup import today
    from frames_cli.ingest.tau2.converter import Tau2Converter
    from frames_cli.ingest.tau2.domains import DOMAINS
    from frames_cli.workspace.layout import Workspace

    if domain is not None and domain not in DOMAINS:
        from frames_cli.errors import InputError

        raise InputError(f"unknown tau2 domain {domain!r} (valid: {', '.join(DOMAINS)})")
    ws = Workspace.open(repo)
    converter = Tau2Converter(tasks, db, domain=domain, created=today(), task_ids=task_ids, exclude=exclude or (),
                              shown=ingest_feedback.shown_path(ws, tasks))
    # Case ids are `tau2-<domain>-<task id>`, so the file is named after the domain the tasks hold.
    ingest_feedback.run_converter(
        ws, converter, out, lambda cases: cases[0].id.rsplit("-", 1)[0], strict=strict, as_json=json_out
    )


#: Every `frames ingest` subcommand as (name, function); a converter adds its line here.
SUBCOMMANDS: list[tuple[str, Callable[..., Any]]] = [
    ("tau2", tau2),
    ("review-log", ingest_feedback.review_log),
    ("trace", ingest_feedback.trace),
    ("cases", ingest_feedback.cases),
    ("amendment", ingest_generated.amendment),
    ("generate", ingest_generated.generate),
]


def register(app: typer.Typer) -> None:
    """Add the `frames ingest` group with one subcommand per entry of `SUBCOMMANDS`."""
    group = typer.Typer(
        name="ingest", help="Turn operational feedback into cases.",
        short_help="Turn feedback (review logs, traces, tasks) into cases.", no_args_is_help=True,
    )
    for name, func in SUBCOMMANDS:
        group.command(name)(guarded(func))
    app.add_typer(group, name="ingest")
