"""The feedback subcommands of `frames ingest`: review-log, trace, cases (amendment and generate, whose
cases a model writes from policy text, are in ingest_generated.py).

Each is listed in `commands/cases/ingest.py` `SUBCOMMANDS`. They parse options, build the converter and
hand over to `ingest/feedback/pipeline.py`. Bad rows are printed as `path:line: error: ...` on stderr and
skipped; the command still exits 0 when good rows were imported. `--strict` makes any bad row
exit 2 with nothing written; a file where no row is good also exits 2. Every run ends with the
converter's account (`ingest/rows/account.py`): the fields read from which columns, the columns left
unused (with a `--map` hint when one looks like a known field), and every row's fate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from frames_cli.commands.common import JsonOption, RepoOption, check_output_file

if TYPE_CHECKING:
    from rich.console import Console

    from frames_cli.formats.case import Case
    from frames_cli.ingest.feedback.pipeline import IngestReport
    from frames_cli.workspace.config import IngestConfig
    from frames_cli.workspace.layout import Workspace

MapOption = Annotated[
    list[str] | None,
    typer.Option(
        "--map",
        help=(
            "FIELD=COLUMN, repeatable or comma-separated: which column (or JSON key; dotted paths reach into objects) "
            "holds a field."
        ),
        show_default=False,
    ),
]
FormatOption = Annotated[
    str | None,
    typer.Option("--format", help="csv, tsv, jsonl or yaml (default: from the file suffix).", show_default=False),
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out", help="Case file to write (.yaml or .jsonl); default: `cases/<source>.yaml`.", show_default=False
    ),
]
StrictOption = Annotated[bool, typer.Option("--strict", help="Import nothing when any row is bad (exit 2).")]
DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run", help="Print each row's answer key beside its comment and every row's fate; write nothing."
    ),
]


def print_report(report: IngestReport, as_json: bool) -> None:
    """The problems on stderr; then the report as JSON, or the account, where the cases went, the priors
    and the cases waiting for review as text."""
    from frames_cli.commands.output import console, emit_json, err_console

    err = err_console()
    for problem in report.problems:
        err.print(str(problem), markup=False)
    if as_json:
        emit_json(report.to_json())
        return
    from frames_cli.formatting import plural

    out = console()
    data = report.to_json()
    for line in report.account.lines() if report.account is not None else ():
        out.print(line)
    _print_stored(out, report, data)
    for text, skills in report.priors:
        where = ", ".join(skills) if skills else "no skill matched well enough: kept under `unmatched`"
        out.print(f"prior → {where}: {text}", markup=False)
    waiting = sum(1 for c in (report.stored.written if report.stored else []) if c.review == "needed")
    if waiting:
        out.print(
            f"{plural(waiting, 'case')} marked `review: needed` (its row above says why): each counts in eval and "
            "evolve once a person has checked its expected answer and written `review: confirmed` in its case file "
            "(--dry-run shows every key beside its comment)",
            markup=False,
        )


def _print_stored(out: Console, report: IngestReport, data: dict[str, Any]) -> None:
    """Where the cases went, the duplicates merged (when no account names them), the case files updated and
    the regression pool's new cases."""
    from frames_cli.formatting import plural

    if report.stored is not None:
        cats = ", ".join(f"{c} {n}" for c, n in data["categories"].items())
        out.print(
            f"wrote {plural(data['cases'], 'case')} to {data['written']}" + (f"  ({cats})" if cats else ""),
            markup=False,
        )
    if report.account is None:
        for item in data["merged"]:
            out.print(f"duplicate: {item['source']} is case {item['into']} (recorded in its also_from)", markup=False)
    for path in data["updated_files"]:
        out.print(f"updated {path} (also_from)", markup=False)
    if data.get("regression_pool"):
        out.print(f"regression pool: {plural(len(data['regression_pool']), 'approved case')} added", markup=False)


def run_converter(
    ws: Workspace, converter: Any, out: Path | None, default_name: str | Callable[[list[Case]], str], strict: bool,
    as_json: bool, dry_run: bool = False,
) -> None:
    """Convert, refuse on --strict or when nothing is good, store, attach priors, print.

    `converter` has `convert() -> list[Case]` and, when it collects bad rows instead of raising,
    `problems` (and `priors` for advice-only rows). `default_name` names `cases/<name>.yaml` when
    there is no `out`; a function of the converted cases when the name depends on them. With
    `dry_run` nothing is stored or attached: the review table (each row's answer key beside its
    comment) and the account are printed, `--json` holds the same with `"dry_run": true`.

    Raises:
        InputError: `out` can never be written, bad rows with `strict`, no good row at all, or
            nothing to import (exit code 2; nothing written).
    """
    from frames_cli.errors import InputError
    from frames_cli.formatting import plural
    from frames_cli.ingest.feedback import pipeline

    check_output_file(out, "--out")
    cases = converter.convert()
    advice = getattr(converter, "priors", [])
    report = pipeline.IngestReport(
        problems=list(getattr(converter, "problems", [])), account=getattr(converter, "account", None)
    )
    errors = [p for p in report.problems if p.severity == "error"]
    if errors and (strict or not (cases or advice)):
        print_report(report, as_json=False)
        why = "nothing imported because of --strict" if strict else "no good rows"
        raise InputError(f"{plural(len(errors), 'bad row')}; {why}", errors[0].location)
    if not (cases or advice):
        raise InputError(f"no case to import: the {converter.kind} source holds no case and no advice; nothing written")
    if dry_run:
        _print_dry_run(report, as_json)
        return
    priors, report.priors = pipeline.attach_priors(ws, ws.config(), advice)
    if cases:
        name = default_name(cases) if callable(default_name) else default_name
        stored = pipeline.store(ws, cases, out, name, replace=True)
        report.add_stored(stored)
        if report.account is not None:
            report.account.settle(stored.merged)
        report.extra["regression_pool"] = pipeline.seed_regression_pool(ws, stored.written)
    if priors is not None:
        from frames_cli.ingest.cases.priors import save_priors

        save_priors(ws.root, priors)
    print_report(report, as_json)


def _print_dry_run(report: IngestReport, as_json: bool) -> None:
    """A dry run's output: problems on stderr, then the review table and the account (or JSON)."""
    from frames_cli.commands.cases.key_table import key_table
    from frames_cli.commands.output import console, emit_json, err_console

    for problem in report.problems:
        err_console().print(str(problem), markup=False)
    if as_json:
        emit_json({**report.to_json(), "dry_run": True})
        return
    out = console()
    if report.account is not None and any(r.key is not None for r in report.account.rows):
        out.print(key_table(report.account))
    for line in report.account.lines() if report.account is not None else ():
        out.print(line, markup=False)
    out.print("dry run: nothing written (cases, priors and the regression pool are unchanged)", markup=False)


def _import_file(
    repo: Path | None,
    mapping: list[str] | None,
    fields: Sequence[str],
    build: Callable[[Workspace, IngestConfig, dict[str, str]], Any],
    out: Path | None,
    name: str,
    strict: bool,
    as_json: bool,
    dry_run: bool = False,
) -> None:
    """Open the workspace at `repo`, read the `--map` items against the converter's `fields`, build
    the converter with `build(workspace, its ingest settings, field → column)` and hand it to
    `run_converter` (`name` is the default case file).

    Raises:
        InputError: a bad `--map` item, or as `run_converter` (exit code 2).
    """
    from frames_cli.ingest.rows.records import parse_mapping
    from frames_cli.workspace.layout import Workspace

    ws = Workspace.open(repo)
    columns = parse_mapping(mapping or [], fields)
    run_converter(ws, build(ws, ws.config().ingest, columns), out, name, strict, as_json, dry_run)


def shown_path(ws: Workspace, path: Path) -> str:
    """How a source file is named in locations and case references: relative to the workspace
    when inside it, else as given when relative, else its file name (an absolute path names one
    machine's folders; a case file is shared)."""
    inside = ws.relative(path)
    if inside != str(path) or not Path(path).is_absolute():
        return inside
    return Path(path).name


def review_log(
    file: Annotated[Path, typer.Argument(help="Review log: CSV, TSV, JSON Lines or YAML.")],
    mapping: MapOption = None,
    fmt: FormatOption = None,
    out: OutOption = None,
    strict: StrictOption = False,
    dry_run: DryRunOption = False,
    repo: RepoOption = None,
    json_out: JsonOption = False,
) -> None:
    """Import a reviewer log: rejected rows → failing cases, approved rows → passing cases, advice → priors.

    Fields (--map FIELD=COLUMN): input, output, verdict, correct, comment, category, reviewer,
    skill, id, fields.NAME. The answer key of a rejected row is the requirements its comment
    states, read by the rules or by `models.keys`; a key the reader is unsure of marks its case
    `review: needed` (it counts once a person writes `review: confirmed`).
    """
    from frames_cli.ingest.feedback import pipeline
    from frames_cli.ingest.feedback.review_log import FIELDS, ReviewLogConverter
    from frames_cli.ingest.keys.answer_key_model import workspace_reader

    def build(ws: Workspace, cfg: IngestConfig, columns: dict[str, str]) -> ReviewLogConverter:
        return ReviewLogConverter(
            file, columns, fmt, pipeline.workspace_policy(ws), cfg.evidence_match, cfg.category, shown_path(ws, file),
            read_keys=workspace_reader(ws, ws.config()),
        )

    _import_file(repo, mapping, FIELDS, build, out, f"review-log-{file.stem}", strict, json_out, dry_run)


def trace(
    file: Annotated[
        Path,
        typer.Argument(
            help=(
                "Agent traces: JSON Lines or a JSON array, each with `steps` (a list of {state, action, result}) or "
                "OpenAI/Anthropic `messages`."
            )
        ),
    ],
    mapping: MapOption = None,
    out: OutOption = None,
    strict: StrictOption = False,
    dry_run: DryRunOption = False,
    repo: RepoOption = None,
    json_out: JsonOption = False,
) -> None:
    """Import agent traces: failures → cases with a trajectory excerpt, successes → passing cases.

    Fields (--map FIELD=COLUMN, COLUMN being a JSON key): input, steps,
    messages, outcome, reward, label, expected, output, category, id.
    """
    from frames_cli.ingest.feedback import pipeline
    from frames_cli.ingest.feedback.trace import ALIASES, TraceConverter
    from frames_cli.ingest.keys.answer_key_model import workspace_reader

    def build(ws: Workspace, cfg: IngestConfig, columns: dict[str, str]) -> TraceConverter:
        return TraceConverter(
            file, columns, pipeline.workspace_policy(ws), cfg.evidence_match, cfg.delayed_failure_steps, cfg.category,
            shown_path(ws, file), read_keys=workspace_reader(ws, ws.config()),
        )

    _import_file(repo, mapping, tuple(ALIASES), build, out, f"trace-{file.stem}", strict, json_out, dry_run)


def cases(
    file: Annotated[Path, typer.Argument(help="Cases as CSV, TSV, JSON Lines or YAML rows.")],
    mapping: MapOption = None,
    fmt: FormatOption = None,
    check: Annotated[
        str | None, typer.Option("--check", help="Check kind of rows that name none.", show_default=False)
    ] = None,
    records: Annotated[
        str | None,
        typer.Option(
            "--records",
            help=(
                "JSON/YAML: the path of the record list below the top level, e.g. seed_examples.questions_and_answers "
                "(parents' fields stay available to --map)."
            ),
            show_default=False,
        ),
    ] = None,
    out: OutOption = None,
    strict: StrictOption = False,
    repo: RepoOption = None,
    json_out: JsonOption = False,
) -> None:
    """Import cases from a table with a field mapping.

    Fields (--map FIELD=COLUMN): input, expected, category, check, answer_format, evidence, notes,
    symptom, id (the case id), fields.NAME. An InstructLab qna.yaml: --records
    seed_examples.questions_and_answers (question, answer, and the seed example's context as evidence).
    """
    from frames_cli.ingest.feedback.generic import FIELDS, GenericConverter

    def build(ws: Workspace, cfg: IngestConfig, columns: dict[str, str]) -> GenericConverter:
        return GenericConverter(file, columns, fmt, cfg.category, check, records, shown_path(ws, file))

    _import_file(repo, mapping, FIELDS, build, out, f"import-{file.stem}", strict, json_out)
