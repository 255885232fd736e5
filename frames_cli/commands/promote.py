"""`frames promote CANDIDATE [--branch NAME]`: a branch at a candidate, ready to merge."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from frames_cli.commands.common import JsonOption, RepoOption, guarded
from frames_cli.commands.review import CandidateArgument


def register(app: typer.Typer) -> None:
    """Add `frames promote` to `app`."""

    @app.command("promote")
    @guarded
    def promote(
        candidate: CandidateArgument,
        branch: Annotated[
            Optional[str], typer.Option("--branch", help="Branch name (default: `frames/<run-id>-<candidate>`).", show_default=False)
        ] = None,
        repo: RepoOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Create a branch at a candidate that passed the gate. Never moves the checked-out branch,
        never overwrites a branch that points elsewhere (running it again is fine). Exit 0; 2 for
        an unknown candidate, S0, a failed gate or an unsafe branch name; 1 when the branch exists
        at another commit."""
        from frames_cli.commands.output import console, emit_json
        from frames_cli.errors import InputError
        from frames_cli.evolution.records import find_candidate
        from frames_cli.gitstore.store import GitStore
        from frames_cli.workspace.layout import Workspace

        ws = Workspace.open(repo)
        store = GitStore(ws.root)
        state, cand = find_candidate(ws, candidate, store)
        if cand.parent_id is None:
            raise InputError(f"{state.run_id}/{cand.id} is S0, the run's base commit: nothing to promote")
        if not cand.gate_passed:
            failed = [c["category"] for c in cand.gate_details.get("checks", []) if not c["passed"]]
            why = f"below the floor in {', '.join(failed)}" if failed else "not gated"
            raise InputError(f"{state.run_id}/{cand.id} did not pass the gate ({why}); see `frames review {state.run_id}/{cand.id}`")
        name = branch or f"frames/{state.run_id}-{cand.id}"
        ref = store.create_branch(name, cand.commit)
        result = {"branch": name, "ref": ref, "commit": cand.commit, "run_id": state.run_id, "candidate": cand.id}
        if json_out:
            emit_json(result)
            return
        console().print(f"Branch {name} is at {cand.commit[:12]} ({state.run_id}/{cand.id}). Merge it with: git merge {name}")
