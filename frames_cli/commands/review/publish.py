"""`frames publish [REMOTE]`: push a run's review branch and refs/notes/frames, write the pull-request description."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from frames_cli.commands.common import (
    STDOUT,
    JsonOption,
    RepoOption,
    check_output_file,
    check_stdout_users,
    guarded,
    write_output,
)

if TYPE_CHECKING:
    from frames_cli.evolution.report.publish import Publication


def register(app: typer.Typer) -> None:
    """Add `frames publish` to `app`."""

    @app.command("publish", short_help="Push a run's review branch and notes; write the PR text.")
    @guarded
    def publish(
        remote: Annotated[str, typer.Argument(help="A configured remote, or a repository's URL or path.")] = "origin",
        run: Annotated[
            str | None, typer.Option("--run", help="Run id (default: the newest run).", show_default=False)
        ] = None,
        body_file: Annotated[
            Path | None,
            typer.Option(
                "--body-file", metavar="FILE", show_default=False,
                help=(
                    "Write the pull-request description to FILE (default: .frames/runs/<run>/pull-request.md; -: print "
                    "it)."
                ),
            ),
        ] = None,
        candidate: Annotated[
            str | None,
            typer.Option(
                "--candidate",
                help=(
                    "Publish the branch frames promote made of this member (r2c1 or <run>/r2c1) instead of the run's "
                    "review branch."
                ),
                show_default=False,
            ),
        ] = None,
        again: Annotated[
            bool,
            typer.Option(
                "--again", help="Push a branch published before and deleted on the remote since (merged or closed)."
            ),
        ] = False,
        repo: RepoOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Push the review branch of a finished run (frames/<run>) and refs/notes/frames to REMOTE,
        and write the pull-request description (the best member's review, as frames review
        --markdown writes it). Then open the pull request with your forge's CLI, e.g.
        gh pr create --head frames/<run> --body-file FILE, or glab mr create; examples/ci/ has
        scheduled GitHub Actions and GitLab CI jobs that do all of it.

        Publishing the same run again updates what it published, never duplicates it: the branch
        is fast-forwarded (left alone when people pushed commits on top of it), the notes are
        merged with the remote's (other hosts' notes are kept), the description is written again.
        A branch published before and deleted on the remote since (a merged or closed pull
        request) is not pushed again unless --again. A run that made no review branch publishes
        nothing and says so (exit 0; --json has branch null); a member a person chose is
        published with frames promote CANDIDATE, then frames publish --candidate CANDIDATE.

        Exit 0; 1 when the remote cannot be reached or refuses, or its branch holds a commit
        frames did not make; 2 for an unfinished or unknown run or an unknown remote; 75 when
        another frames run holds the workspace lock."""
        from dataclasses import replace

        from frames_cli.commands.output import console, emit_json
        from frames_cli.errors import InputError
        from frames_cli.evolution.report.publish import BODY_FILE, publish_run
        from frames_cli.evolution.state.runs import find_candidate, load_run, newest_run, run_dir
        from frames_cli.gitstore.store import GitStore
        from frames_cli.workspace.layout import Workspace
        from frames_cli.workspace.lock import workspace_lock

        check_stdout_users({"--json": json_out, "--body-file -": body_file == STDOUT})
        check_output_file(body_file, "--body-file")
        ws = Workspace.open(repo)
        store = GitStore(ws.root)
        member = None
        if candidate:
            state, member = find_candidate(
                ws, candidate if "/" in candidate or not run else f"{run}/{candidate}", store
            )
        else:
            found = load_run(ws, run) if run else newest_run(ws)
            if found is None:
                raise InputError(f"no runs yet in {ws.relative(ws.runs_dir)} (run `frames evolve` first)")
            state = found
        with workspace_lock(ws, state.run_id, "publish"):
            done, body = publish_run(ws, store, state, remote, again=again, candidate=member)
            if body is not None:
                target = body_file or run_dir(ws, state.run_id) / BODY_FILE
                write_output(target, body)
                done = replace(done, body_file=str(target) if target != STDOUT else None)
        if json_out:
            emit_json(done.to_json())
            return
        out = console()
        if body is None:
            out.print(done.reason, markup=False, highlight=False)
            return
        if body_file == STDOUT:
            return
        _print_published(done, remote)


def _print_published(done: Publication, remote: str) -> None:
    """What was pushed, where the description is, and how to open the pull request."""
    from frames_cli.commands.output import console, err_console

    # A publication with a description pushed its branch: these are set.
    assert done.commit is not None and done.branch_action is not None and done.notes_action is not None
    out = console()
    said = {
        "created": "created", "updated": "updated (fast-forward)", "replaced": "moved to the run's best member",
        "unchanged": "already up to date", "behind": "left as it is: it has commits on top of the run's",
    }[done.branch_action]
    notes = {"pushed": "pushed", "merged": "merged with the remote's and pushed", "unchanged": "already up to date",
             "none": "none to push"}[done.notes_action]
    out.print(
        f"Published {done.branch} ({done.candidate}, {done.commit[:12]}) to {remote}: {said}.", markup=False,
        highlight=False,
    )
    out.print(f"Notes refs/notes/frames: {notes}.", markup=False, highlight=False)
    if done.base and not done.base_on_remote:
        err_console().print(
            f"warning: {remote} has no branch {done.base}, which the pull request would merge into: "
            f"push it first (git push {remote} {done.base})",
            markup=False, soft_wrap=True,
        )
    if done.body_file:
        out.print(f"Pull-request description: {done.body_file}", markup=False, highlight=False)
        base = f" --base {_quote(done.base)}" if done.base else ""
        out.print(
            f"Open the pull request: gh pr create{base} --head {done.branch} --title {_quote(done.title)} "
            f"--body-file {done.body_file}",
            markup=False, highlight=False,
        )


def _quote(text: str | None) -> str:
    import shlex

    return shlex.quote(text or "")
