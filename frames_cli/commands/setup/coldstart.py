"""`frames coldstart`: policy documents → one skill per business-process section, in one commit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from frames_cli.commands.common import JsonOption, NoCacheOption, RepoOption, guarded

if TYPE_CHECKING:
    from rich.console import Console

    from frames_cli.coldstart.run import ColdstartResult


def _print(result: ColdstartResult) -> None:
    from rich.markup import escape

    from frames_cli.commands.output import console
    from frames_cli.formatting import plural

    out = console()
    if result.finished:
        out.print(f"[yellow]{escape(str(result.finished))}[/]", markup=True)
    if result.simulator_notice:
        out.print(f"[yellow]{escape(result.simulator_notice)}[/]", markup=True)
    if result.skipped_files:
        out.print(f"not policy, skipped: {', '.join(f'{f} ({why})' for f, why in result.skipped_files)}")
    groups = (
        ("created", result.names("create")),
        ("updated", result.names("update", "force")),
        ("unchanged", result.names("keep")),
        ("removed (section gone)", result.removed),
    )
    for label, names in groups:
        if names:
            out.print(f"{label}: {', '.join(names)}")
    _print_left_as_is(out, result)
    for fc in result.coverage:
        state = (
            "complete"
            if fc.complete
            else f"{plural(len(fc.uncovered), 'uncovered run')}, {plural(len(fc.overlaps), 'line')} covered twice"
        )
        out.print(f"coverage {fc.file}: {fc.covered}/{fc.content_lines} content lines covered once ({state})")
    out.print(f"commit {result.commit[:12]}" if result.commit else "nothing changed; no commit")


def _print_left_as_is(out: Console, result: ColdstartResult) -> None:
    """The skills coldstart kept as they were (edited, orphaned, oversized, not rewritten), each group with why."""
    from rich.markup import escape

    skipped = result.names("skip")
    if skipped:
        out.print(
            "[yellow]skipped, edited since generation or not made by coldstart (use --force to overwrite):[/] "
            f"{escape(', '.join(skipped))}",
            markup=True,
        )
    if result.orphaned:
        out.print(
            f"[yellow]kept, edited but their policy section is gone:[/] {escape(', '.join(result.orphaned))}",
            markup=True,
        )
    if result.oversized:
        out.print(
            "[yellow]over coldstart.max_tokens, one paragraph, list item or table that cannot be cut:[/] "
            f"{escape(', '.join(result.oversized))} (split that text in the policy, or raise the limit)",
            markup=True,
        )
    for name, reason in result.rewrite_failures:
        out.print(f"[yellow]rewrite failed, kept verbatim:[/] {escape(name)}: {escape(reason)}", markup=True)


def register(app: typer.Typer) -> None:
    """Add `frames coldstart` to `app`."""

    @app.command("coldstart", short_help="Cut the policy documents into skills, and commit them.")
    @guarded
    def coldstart(
        repo: RepoOption = None,
        no_llm: Annotated[
            bool, typer.Option("--no-llm", help="Keep the policy text verbatim even when models.coldstart is set.")
        ] = False,
        force: Annotated[
            bool, typer.Option("--force", help="Overwrite (or remove) skills edited since coldstart wrote them.")
        ] = False,
        no_cache: NoCacheOption = False,
        json_out: JsonOption = False,
    ) -> None:
        """Cut every document under policies/ along its headings into skills, flat under skills/,
        each with back-links to its policy lines, and commit them. With models.coldstart set (and
        no --no-llm) each section is rewritten into a step-ordered procedure, with a progress bar
        on a terminal (not with --json); the model's answers are cached, so regenerating a skill
        from unchanged policy text makes no model call (--no-cache to ask again). A second run
        with unchanged policies writes nothing. Exit 0; 2 for a bad policy file or frames.yaml; 1
        when git fails; 75 when another run holds the lock."""
        from frames_cli.coldstart.run import run_coldstart
        from frames_cli.commands.output import emit_json, progress_bar
        from frames_cli.evolution.state.run_ids import new_run_id
        from frames_cli.workspace.layout import Workspace
        from frames_cli.workspace.lock import workspace_lock

        ws = Workspace.open(repo)
        config = ws.config()
        run_id = new_run_id()
        spend = None
        with workspace_lock(ws, run_id, "coldstart"):
            if config.models.coldstart and not no_llm:
                from frames_cli.coldstart.rewrite import ModelRewriter
                from frames_cli.llm.client.client import ModelClient

                # Ledger and audit log of the model calls go to .frames/coldstart/<run-id>/.
                with ModelClient(
                    ws, config, run_dir=ws.state_dir / "coldstart" / run_id, use_cache=not no_cache
                ) as client:
                    try:
                        with progress_bar(
                            f"rewriting policy sections with {config.models.coldstart}", None, quiet=json_out
                        ) as progress:
                            result = run_coldstart(
                                ws, config, rewriter=ModelRewriter(client, config, progress), force=force
                            )
                    finally:
                        spend = client.ledger.to_dict()
                        if spend["roles"]:  # an up-to-date run calls no model and leaves no record
                            client.ledger.save()
            else:
                result = run_coldstart(ws, config, force=force)
        if json_out:
            emit_json({**result.to_json(), "model_spend": spend})
            return
        _print(result)
        if spend:
            from frames_cli.commands.output import console
            from frames_cli.formatting import plural

            role = spend["roles"].get("coldstart", {})
            console().print(
                f"model: {plural(role.get('calls', 0), 'call')}, {role.get('cached', 0)} cached, "
                f"{spend['total_tokens']} tokens, ${spend['total_usd']:.4f}"
            )
