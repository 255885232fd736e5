"""`frames catalog`: what the built-in agent reads before it loads a skill, as it reads it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from frames_cli.commands.common import JsonOption, RepoOption, guarded

if TYPE_CHECKING:
    from frames_cli.executor.catalog import Catalog


def catalog_data(catalog: Catalog) -> dict[str, Any]:
    """The catalog as plain data (what `--json` prints): `given` (name and tokens of each skill given
    with every case), `listed` (id, name, description of each listed skill, in the agent's order),
    `given_tokens`, `listing_tokens` and `tokens_per_listed_skill` (tokens: characters / 4,
    `tokens.approx_tokens`, as frames counts them without a tokenizer)."""
    from frames_cli.tokens import approx_tokens

    listing = approx_tokens(catalog.text())
    return {
        "given": [{"name": catalog.ids[sid], "tokens": approx_tokens(catalog.block(sid))} for sid in catalog.given],
        "listed": [{"id": sid, "name": name, "description": catalog.skills[name].description}
                   for sid, name in catalog.listed.items()],
        "given_tokens": approx_tokens(catalog.given_text()),
        "listing_tokens": listing,
        "tokens_per_listed_skill": round(listing / len(catalog.listed), 1) if catalog.listed else None,
    }


def register(app: typer.Typer) -> None:
    """Add `frames catalog` to `app`."""

    @app.command("catalog", short_help="What the agent reads first: the given rules, the listing.")
    @guarded
    def catalog_command(
        ref: Annotated[
            str | None,
            typer.Option("--ref", help="The skills at this git revision (default: the working tree)."),
        ] = None,
        repo: RepoOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Print what the built-in agent reads on each case's first turn before it asks for a skill:
        the skills it is given in full with every case (tagged `general-rules`), then the listing of
        the others, `- id: name — description`, exactly as sent; then their size in tokens. Skills
        that do not load are left out, as `frames eval` leaves them out, and named on stderr. Exit 0;
        2 when the folder is not a workspace or no skill loads."""
        from frames_cli.commands.evolve.eval import load_skills
        from frames_cli.commands.output import emit_json, err_console
        from frames_cli.executor.catalog import Catalog
        from frames_cli.formats.skill_set import left_out_message
        from frames_cli.sanitize import for_terminal
        from frames_cli.workspace.layout import Workspace

        ws = Workspace.open(repo)
        skills, dropped = load_skills(ws, ref)
        if dropped:
            err_console().print(left_out_message(dropped, len(skills)), markup=False, soft_wrap=True)
        catalog = Catalog.of(skills)
        data = catalog_data(catalog)
        if json_out:
            emit_json(data)
            return
        # Descriptions and bodies are user and model text: control characters are shown escaped.
        typer.echo(for_terminal(catalog.given_text() + catalog.text()))
        per_skill = data["tokens_per_listed_skill"]
        typer.echo(
            f"\n{len(catalog.listed)} skills listed, {data['listing_tokens']:,} tokens"
            + (f" ({per_skill} per skill)" if per_skill is not None else "")
            + f"; {len(catalog.given)} given with every case, {data['given_tokens']:,} tokens (characters / 4)"
        )
