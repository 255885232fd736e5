"""`frames adopt [DIR]`: turn an existing folder of SKILL.md files into a valid frames / Agent Skills library."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from frames_cli.commands.common import JsonOption, NoCacheOption, RepoOption, guarded

if TYPE_CHECKING:
    from rich.console import Console

    from frames_cli.adopt.run import AdoptReport, FileReport
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace


def register(app: typer.Typer) -> None:
    """Add `frames adopt` to `app`."""

    @app.command("adopt", short_help="Bring a skill library from another runtime into skills/.")
    @guarded
    def adopt(
        folder: Annotated[
            Path | None,
            typer.Argument(
                help=(
                    "Folder of skill folders (<folder>/<skill>/SKILL.md), or one skill folder; default: the "
                    "workspace's skills/."
                ),
                show_default=False,
            ),
        ] = None,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Report what would change; write and commit nothing.")
        ] = False,
        no_commit: Annotated[
            bool, typer.Option("--no-commit", help="Write the skills but do not commit them.")
        ] = False,
        no_model: Annotated[
            bool,
            typer.Option(
                "--no-model", help="Write missing descriptions from the text even when models.coldstart is set."
            ),
        ] = False,
        no_cache: NoCacheOption = False,
        repo: RepoOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Make a folder of SKILL.md files (written for Claude Code or another runtime) a valid library in skills/.

        Per file: front matter added where missing; YAML that does not parse read entry by entry;
        unknown keys (version, author, tags, ...) moved under `metadata` as strings; the name made
        valid and equal to its folder (the folder renamed when its name is not valid); a missing
        description written from the body (by `models.coldstart` when set, else from the text); a
        description over 1,024 characters shortened, its full text appended to the body. The body
        is kept byte for byte. Every change is listed per file; a file that cannot be repaired is
        left untouched and named with the reason. Skills from another folder are copied into
        skills/<name>/ (the folder itself is not changed). The written files are committed on the
        current branch with your git identity (`--no-commit` to leave that to you).

        Adopting a library again after it changed updates each skill adopted from it before and
        unchanged since (the last commit that changed its folder is an adopt commit, and the
        working tree holds what it committed): files added, changed (+/− lines) and removed are
        listed per skill, and all of it is one commit. A skill a person edited since, or one of
        that name that was never adopted, is refused and left as it is.

        Exit codes: 0 done; 1 git refused (every file written is put back); 2 bad input (no such
        folder, no SKILL.md in it), or some file was not adopted (could not be repaired, or
        refused: the reasons are listed; the others are written and committed); 75 another
        frames run holds the workspace lock.
        """
        from frames_cli.evolution.state.run_ids import new_run_id
        from frames_cli.workspace.layout import Workspace
        from frames_cli.workspace.lock import workspace_lock

        ws = Workspace.open(repo)
        config = ws.config()
        with workspace_lock(ws, new_run_id(), "adopt"):
            report = _adopt(ws, config, folder, dry_run, no_commit, no_model, no_cache)
        _print(report, json_out)
        refused = report.count("unrepairable")
        if refused:
            from frames_cli.errors import InputError

            done = (
                "nothing was written"
                if report.dry_run or not report.written
                else "the others were written" + (" and committed" if report.commit else "")
            )
            raise InputError(f"{refused} skill file(s) not adopted (the reasons are above); {done}")


def _adopt(
    ws: Workspace, config: FramesConfig, folder: Path | None, dry_run: bool, no_commit: bool, no_model: bool,
    no_cache: bool,
) -> AdoptReport:
    """`adopt.run.adopt` with the model describer when `models.coldstart` is set (and allowed)."""
    from frames_cli.adopt.run import adopt as run_adopt

    client = None
    if config.models.coldstart and not no_model and not dry_run:
        from frames_cli.llm.client.client import ModelClient

        client = ModelClient(ws, config, use_cache=not no_cache)
    try:
        describer = None
        if client is not None:
            from frames_cli.adopt.model import model_describer

            describer = model_describer(client)
        from frames_cli.commands.output import model_wait

        waiting = (
            f"adopting; {config.models.coldstart} writes missing descriptions" if client is not None else "adopting"
        )
        with model_wait(waiting, quiet=client is None):
            return run_adopt(ws, config, folder, dry_run=dry_run, commit=not no_commit, describer=describer)
    finally:
        if client is not None:
            client.close()


def _print(report: AdoptReport, json_out: bool) -> None:
    from frames_cli.commands.output import console, emit_json

    if json_out:
        emit_json(report.to_json())
        return
    out = console()
    if report.finished:
        out.print(str(report.finished), markup=False, soft_wrap=True)
    for f in report.files:
        where = f" → skills/{f.skill}" if not report.in_place or f.skill != Path(f.source).parent.name else ""
        _print_file(out, f, where)
    counts = (
        f"{report.count('valid')} valid, {report.count('repaired')} repaired, "
        + "".join(f"{report.count(s)} {s}, " for s in ("updated", "unchanged") if report.count(s))
        + f"{report.count('unrepairable')} unrepairable"
    )
    if report.dry_run:
        out.print(f"dry run: {counts}; nothing written", markup=False)
    elif report.commit:
        out.print(f"{counts}; committed {report.commit[:12]} ({len(report.written)} file(s))", markup=False)
    else:
        out.print(
            f"{counts}; {len(report.written)} file(s) written" + (", not committed" if report.written else ""),
            markup=False,
        )


def _print_file(out: Console, f: FileReport, where: str) -> None:
    """One file's line (`where`: the folder it went to, when not its own), and what was repaired or updated."""
    if f.status == "unrepairable":
        out.print(f"unrepairable: {f.source}: {f.reason} (left untouched)", markup=False, soft_wrap=True)
        return
    said = {
        "updated": f"updated: {f.source}{where} (adopted before; the library changed)",
        "unchanged": f"unchanged: {f.source}{where} (adopted before; no change in the library)",
        "repaired": f"repaired: {f.source}{where}",
    }.get(f.status, f"valid: {f.source}{where}")
    out.print(said, markup=False)
    if f.status in ("updated", "repaired"):
        for change in f.changes:
            out.print(f"  - {change}", markup=False, soft_wrap=True)
