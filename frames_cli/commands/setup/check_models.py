"""`frames check-models`: one minimal call per configured role: does it answer, its price, its latency."""

from __future__ import annotations

import typer

from frames_cli.commands.common import JsonOption, RepoOption, guarded


def register(app: typer.Typer) -> None:
    """Add `frames check-models` to `app`."""

    @app.command("check-models", short_help="Call each role's model once: does it answer, price, latency.")
    @guarded
    def check_models(repo: RepoOption = None, json_out: JsonOption = False) -> None:
        """Check every role that has a model in frames.yaml with one minimal call (a few tokens, no
        cache, no retry) and report per role whether it answers, litellm's price per million tokens
        (when its table knows the model) and the call's latency. A role whose API key is not set is
        reported without a call, naming the environment variable; spool models are not called.

        Exit codes: 0 every checked role answered, 1 some role did not, 2 bad input.
        """
        from frames_cli.commands.output import console, emit_json, model_wait
        from frames_cli.llm.client.check import check_models as run_checks
        from frames_cli.workspace.layout import Workspace

        ws = Workspace.open(repo)
        with model_wait("one call per role", quiet=json_out):
            results = run_checks(ws, ws.config())
        if json_out:
            emit_json([r.to_json() for r in results])
        else:
            from rich import box
            from rich.table import Table

            table = Table(title="frames check-models", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
            for name in ("role", "model", "answers", "USD per M tokens\nin / out", "latency"):
                table.add_column(name, justify="right" if name == "latency" else "left")
            for r in results:
                price = f"{r.price.input_per_million:g} / {r.price.output_per_million:g}" if r.price else "unknown"
                latency = f"{r.latency_s:.2f} s" if r.latency_s is not None else "—"
                table.add_row(r.role, r.model, "yes" if r.ok else "no", price, latency)
            out = console()
            out.print(table)
            for r in results:
                if not r.ok:
                    out.print(f"{r.role}: {r.detail}", markup=False, soft_wrap=True)
            if not results:
                out.print("no role has a model in frames.yaml (`models.<role>`)", markup=False)
        if any(not r.ok for r in results):
            raise typer.Exit(1)
