"""`frames validate`: every problem in skills, policies, cases and frames.yaml, one line each."""

from __future__ import annotations

from typing import Annotated

import typer

from frames_cli.commands.common import JsonOption, RepoOption, guarded


def register(app: typer.Typer) -> None:
    """Add `frames validate` to `app`."""

    @app.command("validate", short_help="Check frames.yaml, skills, policies and cases.")
    @guarded
    def validate(
        repo: RepoOption = None,
        strict: Annotated[
            bool,
            typer.Option(
                "--strict", help="Fail on warnings too (stale back-links, uncovered policy lines, long bodies)."
            ),
        ] = False,
        json_out: JsonOption = False,
    ) -> None:
        """Check frames.yaml, every skill (Agent Skills rules, name = folder, no < or > in
        descriptions, body size, protected regions, references, back-links and their hashes),
        every policy document, policy coverage and every case file. Prints one line per problem,
        `path:line: severity: message`. Exit 2 when there is an error (or, with --strict, a
        warning), else 0."""
        from frames_cli.commands.output import console, emit_json
        from frames_cli.errors import EXIT_USAGE
        from frames_cli.workspace.health import inspect_workspace
        from frames_cli.workspace.layout import Workspace

        health = inspect_workspace(Workspace.open(repo))
        failed = bool(health.errors or (strict and health.warnings))
        if json_out:
            emit_json(
                {
                    "ok": not failed,
                    "errors": len(health.errors),
                    "warnings": len(health.warnings),
                    "problems": [
                        {
                            "path": str(p.location.path), "line": p.location.line, "severity": p.severity,
                            "message": p.message,
                        }
                        for p in health.problems
                    ],
                }
            )
        else:
            from frames_cli.formatting import plural

            out = console()
            for problem in health.problems:
                out.print(str(problem), markup=False)
            cases = sum((health.cases_by_category or {}).values())
            out.print(
                f"{plural(len(health.errors), 'error')}, {plural(len(health.warnings), 'warning')} in "
                f"{plural(health.skill_files, 'skill')}, {plural(len(health.docs), 'policy document')}, "
                f"{plural(cases, 'case')}",
                markup=False,
            )
        if failed:
            raise typer.Exit(EXIT_USAGE)
