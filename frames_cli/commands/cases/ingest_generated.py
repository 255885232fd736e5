"""The `frames ingest` subcommands whose cases a model writes from policy text: amendment (the sections
an amendment changed, and the skills it makes stale) and generate (the sections no case covers).

Listed in `commands/cases/ingest.py` `SUBCOMMANDS` with the feedback ones (ingest_feedback.py), whose
report printing and options they share. Generated cases are marked for review before they count.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from frames_cli.commands.cases.ingest_feedback import OutOption, print_report
from frames_cli.commands.common import JsonOption, RepoOption, check_output_file

if TYPE_CHECKING:
    from frames_cli.ingest.feedback.pipeline import IngestReport

#: Most cases one `frames ingest generate --cases` asks the generator for (each is a model call's worth).
MAX_GENERATED_CASES = 10_000
CasesOption = Annotated[
    int | None,
    typer.Option(
        "--cases", min=0, max=MAX_GENERATED_CASES,
        help="Most cases to generate (default: ingest.generated_per_section per section).", show_default=False,
    ),
]


def amendment(
    old: Annotated[Path | None, typer.Argument(help="The policy before the amendment.", show_default=False)] = None,
    new: Annotated[Path | None, typer.Argument(help="The policy after it.", show_default=False)] = None,
    git_range: Annotated[
        str | None,
        typer.Option(
            "--git", help="A..B (or A, meaning A..HEAD): compare policies/ at two commits.", show_default=False
        ),
    ] = None,
    file: Annotated[
        str | None,
        typer.Option(
            "--file", help="Workspace path of the amended policy (default: NEW's path, or `policies/<NEW's name>`).",
            show_default=False,
        ),
    ] = None,
    n_cases: CasesOption = None,
    out: OutOption = None,
    repo: RepoOption = None,
    json_out: JsonOption = False,
) -> None:
    """Find the policy sections an amendment changed, the skills it makes stale, and generate cases for it.

    Stale skills are reported, not edited: staleness follows from each skill's back-link hashes.
    Cases are generated when `models.generator` is set (marked generated, reviewed: false).
    """
    from frames_cli.errors import InputError, Location
    from frames_cli.ingest.feedback import amendment as amend
    from frames_cli.ingest.feedback import pipeline
    from frames_cli.workspace.layout import Workspace

    check_output_file(out, "--out")
    ws = Workspace.open(repo)
    config = ws.config()
    either = "give either OLD and NEW files or --git A..B"
    if git_range is not None:
        if old is not None and new is not None:
            raise InputError(either)
        label, old_files, new_files = amend.git_versions(ws.root, ws.policies_dir, git_range)
        prefix = f"{label} "
        old_sha, _, new_sha = label.partition("..")
        shown = {f: (f"{old_sha}:{f}", f"{new_sha}:{f}") for f in new_files}
    elif old is None or new is None:
        raise InputError(either)
    else:
        name = file or (ws.relative(new) if ws.relative(new).startswith("policies/") else f"policies/{new.name}")
        if not (ws.root / name).is_file():
            # Stale skills are found through back-links to this path: a wrong one silently finds none.
            how = "check --file" if file else "name the amended policy with --file policies/<file>"
            raise InputError(f"no such policy file in the workspace; {how}", Location(name))
        old_bytes, new_bytes = amend.read_pair(old, new)
        old_files, new_files, prefix = {name: old_bytes}, {name: new_bytes}, ""
        shown = {name: (str(old), str(new))}
    changes = [c for f in new_files for c in amend.section_changes(f, old_files[f], new_files[f], shown[f])]
    stale = amend.stale_skills(pipeline.workspace_skills(ws), new_files, changes)
    report = pipeline.IngestReport(
        extra={
            "changed_sections": [
                {
                    "file": c.file, "heading": c.heading, "status": c.status, "lines": f"{c.unit.start}-{c.unit.end}",
                    "added": c.added, "removed": c.removed, "focus": [f"{u.start}-{u.end}" for u in c.focus],
                }
                for c in changes
            ],
            "stale_skills": [
                {"skill": s.skill, "backlink": s.backlink.encode(), "reason": s.reason, "sections": s.sections}
                for s in stale
            ],
        }
    )
    units = [u for c in changes for u in c.focus]
    if units and config.models.generator and n_cases != 0:
        limit = n_cases if n_cases is not None else config.ingest.generated_per_section * len(units)
        from frames_cli.commands.output import model_wait

        with model_wait(
            f"asking {config.models.generator} for cases of {len(units)} changed section(s)", quiet=json_out
        ):
            generator = pipeline.generate(ws, config, units, limit, amend.KIND, prefix)
        report.problems = generator.problems
        report.extra["usage"] = generator.usage.to_dict()
        if generator.cases:
            report.add_stored(pipeline.store(ws, generator.cases, out, "amendment", replace=False))
    elif units and not config.models.generator:
        report.extra["note"] = "models.generator is not set: no cases generated"
    if not json_out:
        _print_amendment(report)
    print_report(report, json_out)


def _print_amendment(report: IngestReport) -> None:
    from frames_cli.commands.output import console

    out = console()
    for c in report.extra["changed_sections"]:
        out.print(f"{c['status']}: {c['file']}:{c['lines']} {c['heading']}", markup=False)
        for s in c["added"]:
            out.print(f"  + {s}", markup=False)
        for s in c["removed"]:
            out.print(f"  - {s}", markup=False)
    for s in report.extra["stale_skills"]:
        where = f" (overlaps {', '.join(s['sections'])})" if s["sections"] else ""
        out.print(f"stale: {s['skill']}: {s['reason']} at {s['backlink'].split(' sha256:')[0]}{where}", markup=False)
    if "note" in report.extra:
        out.print(report.extra["note"], markup=False)


def generate(
    n_cases: CasesOption = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the uncovered sections and skills; call no model.")
    ] = False,
    out: OutOption = None,
    repo: RepoOption = None,
    json_out: JsonOption = False,
) -> None:
    """Cold-start cases: ask the generator model for cases testing the policy sections and skills no case covers.

    New cases are marked generated and `reviewed: false`: they count only once a person sets
    `reviewed: true` in the case file (default cases/generated.yaml).
    """
    from frames_cli.ingest.feedback import pipeline
    from frames_cli.workspace.layout import Workspace

    check_output_file(out, "--out")
    ws = Workspace.open(repo)
    config = ws.config()
    uncovered = pipeline.coverage(ws, config).uncovered()
    report = pipeline.IngestReport(extra={"uncovered": [{"ref": u.ref, "heading": u.heading} for u in uncovered]})
    # Skills that do not load are not coverage units: say so, or their sections look uncovered silently.
    report.problems = pipeline.skills_left_out(ws)[1]
    generator_cases = 0
    limit = n_cases if n_cases is not None else config.ingest.generated_per_section * len(uncovered)
    if not dry_run and uncovered:
        from frames_cli.commands.output import model_wait

        with model_wait(
            f"asking {config.models.generator} for up to {limit} cases of {len(uncovered)} uncovered section(s)",
            quiet=json_out,
        ):
            generator = pipeline.generate(ws, config, uncovered, limit, "generator")
        generator_cases = len(generator.cases)
        report.problems = report.problems + generator.problems
        report.extra["usage"] = generator.usage.to_dict()
        if generator.cases:
            report.add_stored(pipeline.store(ws, generator.cases, out, "generated", replace=False))
    if dry_run:
        report.extra["would_generate"] = limit if uncovered else 0
    if not json_out:
        from frames_cli.commands.output import console
        from frames_cli.formatting import plural

        for u in report.extra["uncovered"]:
            console().print(f"uncovered: {u['ref']} {u['heading']}", markup=False)
        if dry_run:
            console().print(
                f"dry run: {plural(len(uncovered), 'uncovered section')}; the generator would be asked for at most "
                f"{plural(report.extra['would_generate'], 'case')}; nothing written, no model called",
                markup=False,
            )
        if dry_run or generator_cases:
            console().print("Generated cases are marked `reviewed: false`: they count in eval and evolve only "
                            "once a person has checked each and set `reviewed: true` in its case file.", markup=False)
    print_report(report, json_out)
