"""`frames review CANDIDATE`: what a reviewer needs to approve one candidate, in a minute."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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

CandidateArgument = Annotated[
    str, typer.Argument(help="A candidate: `r2c1` (newest run that has it), `<run-id>/<candidate>`, or its commit.")
]


def register(app: typer.Typer) -> None:
    """Add `frames review` to `app`."""

    @app.command("review", short_help="One candidate for review: why, the vote, the gate, the diff.")
    @guarded
    def review(
        candidate: CandidateArgument,
        repo: RepoOption = None,
        json_out: JsonOption = False,
        markdown: Annotated[
            Path | None,
            typer.Option(
                "--markdown", metavar="FILE",
                help=(
                    "Also write the review as Markdown (a pull-request description) to FILE (`-`: print it instead of "
                    "the review)."
                ),
                show_default=False,
            ),
        ] = None,
    ) -> None:
        """Show one candidate for review: the failures that motivated it, the blueprint with its
        votes, cases and policy back-links, results per category before and after (n cases beside
        each rate), the gate verdict, and the diff of skills/ against its parent. `--markdown FILE`
        as in `frames eval`; `--markdown -` and `--json` exclude each other. Exit 0, 2 when no
        candidate matches, FILE cannot be written, or both print on standard output."""
        from frames_cli.commands.output import emit_json, print_trimmed
        from frames_cli.evolution.report.review import build_review
        from frames_cli.evolution.report.review_markdown import review_markdown
        from frames_cli.evolution.state.runs import find_candidate
        from frames_cli.gitstore.store import GitStore
        from frames_cli.sanitize import for_terminal
        from frames_cli.workspace.layout import Workspace

        check_stdout_users({"--json": json_out, "--markdown -": markdown == STDOUT})
        check_output_file(markdown, "--markdown")
        ws = Workspace.open(repo)
        store = GitStore(ws.root)
        state, cand = find_candidate(ws, candidate, store)
        result = build_review(ws, store, state, cand)
        # Diffs, change texts and failure reasons are model and user text: their control
        # characters are shown as escapes, never sent to the reviewer's terminal (nor to FILE).
        text = for_terminal(review_markdown(result))
        if markdown:
            write_output(markdown, text)
        if json_out:
            emit_json(result.to_json())
        elif markdown != STDOUT:
            from frames_cli.commands.output import console
            from frames_cli.commands.review.markdown_view import Whole, render_markdown

            # Wrapped, not cropped: a change text or a failure reason must be readable in full;
            # tables are split by columns and diff lines keep their marker (markdown_view), or
            # stay whole on a pipe.
            for part in render_markdown(text, console()):
                if isinstance(part, Whole):
                    console().print(part, soft_wrap=True)
                else:
                    print_trimmed(part)
