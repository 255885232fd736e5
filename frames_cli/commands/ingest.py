"""`frames ingest KIND`: turn operational feedback into cases; one subcommand per converter.

Each converter adds one function to `SUBCOMMANDS`: it parses its own options, builds its
`Converter` and hands the cases to `save_cases`, which writes them (atomically, keeping the
`created` stamps of cases already in the file) and reports what was written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from frames_cli.commands import ingest_feedback
from frames_cli.commands.common import JsonOption, RepoOption, guarded

if TYPE_CHECKING:
    from frames_cli.formats.case import Case

OutOption = Annotated[
    Optional[Path],
    typer.Option("--out", help="Case file to write (.yaml or .jsonl); default: `cases/<source>.yaml` in the workspace.", show_default=False),
]


def save_cases(cases: Sequence[Case], out: Path | None, default_name: str, repo: Path | None, as_json: bool) -> Path:
    """Write `cases` to `out` (or `<workspace>/cases/<default_name>.yaml`) and print a summary.

    Cases whose id is already in the file keep their `created` stamp, so re-ingesting an unchanged
    source rewrites the same bytes. Ids must not clash with other case files of the workspace.

    Raises:
        InputError: no workspace (without `--out`), an existing file that does not load, or an id
            already used by another case file (exit code 2; nothing is written).
    """
    from frames_cli.errors import InputError, Location
    from frames_cli.formats.case import load_cases, write_cases
    from frames_cli.workspace.layout import Workspace

    if out is None:
        ws = Workspace.open(repo)
        out = ws.cases_dir / f"{default_name}.yaml"
        others = [p for p in sorted(ws.cases_dir.glob("*")) if p.suffix in (".yaml", ".yml", ".jsonl") and p != out]
        taken = {c.id: c.location for c in load_cases(others)}
        for case in cases:
            if case.id in taken:
                raise InputError(f"case id {case.id!r} is already used at {taken[case.id]}", Location(out))
    if out.exists():
        stamps = {c.id: c.created for c in load_cases([out])}
        for case in cases:
            case.created = stamps.get(case.id) or case.created
    write_cases(out, cases)
    counts = Counter(c.category for c in cases)
    if as_json:
        from frames_cli.commands.output import emit_json

        emit_json({"written": str(out), "cases": len(cases), "categories": dict(sorted(counts.items()))})
    else:
        from frames_cli.commands.output import console

        summary = ", ".join(f"{cat} {n}" for cat, n in sorted(counts.items()))
        console().print(f"wrote {len(cases)} cases to {out}  ({summary})")
    return out


def tau2(
    tasks: Annotated[Path, typer.Option("--tasks", help="tau2-bench tasks.json of one domain.")],
    db: Annotated[Path, typer.Option("--db", help="The domain database: a folder with db.json or one `<table>.json` per table.")],
    domain: Annotated[Optional[str], typer.Option("--domain", help="airline or retail; default: read from the tasks.")] = None,
    task_ids: Annotated[Optional[list[str]], typer.Option("--task", help="Only this task id (repeatable).")] = None,
    out: OutOption = None,
    repo: RepoOption = None,
    json_out: JsonOption = False,
) -> None:
    """Convert tau2-bench tasks into cases (the customer's side as input, allowed write actions expected)."""
    from frames_cli.ingest.tau2 import DOMAINS, Tau2Converter

    if domain is not None and domain not in DOMAINS:
        from frames_cli.errors import InputError

        raise InputError(f"unknown tau2 domain {domain!r} (valid: {', '.join(DOMAINS)})")
    converter = Tau2Converter(tasks, db, domain=domain, created=date.today().isoformat(), task_ids=task_ids)
    cases = converter.convert()
    name = cases[0].id.rsplit("-", 1)[0] if cases else "tau2"
    save_cases(cases, out, name, repo, json_out)


#: Every `frames ingest` subcommand as (name, function); a converter adds its line here.
SUBCOMMANDS: list[tuple[str, Callable[..., Any]]] = [
    ("tau2", tau2),
    ("review-log", ingest_feedback.review_log),
    ("trace", ingest_feedback.trace),
    ("cases", ingest_feedback.cases),
    ("amendment", ingest_feedback.amendment),
    ("generate", ingest_feedback.generate),
]


def register(app: typer.Typer) -> None:
    """Add the `frames ingest` group with one subcommand per entry of `SUBCOMMANDS`."""
    group = typer.Typer(name="ingest", help="Turn operational feedback into cases.", no_args_is_help=True)
    for name, func in SUBCOMMANDS:
        group.command(name)(guarded(func))
    app.add_typer(group, name="ingest")
