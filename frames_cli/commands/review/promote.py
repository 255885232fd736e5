"""`frames promote CANDIDATE [--branch NAME]`: a branch at a candidate, ready to merge."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from frames_cli.commands.common import JsonOption, RepoOption, guarded
from frames_cli.commands.review.review import CandidateArgument

if TYPE_CHECKING:
    from frames_cli.evolution.state.records import Candidate
    from frames_cli.gitstore.identity import Identity
    from frames_cli.gitstore.store import GitStore


def register(app: typer.Typer) -> None:
    """Add `frames promote` to `app`."""

    @app.command("promote", short_help="Make a branch at a candidate, ready to merge.")
    @guarded
    def promote(
        candidate: CandidateArgument,
        branch: Annotated[
            str | None,
            typer.Option("--branch", help="Branch name (default: `frames/<run-id>-<candidate>`).", show_default=False),
        ] = None,
        override_gate: Annotated[
            str | None,
            typer.Option(
                "--override-gate", metavar="REASON", show_default=False,
                help=(
                    "Promote a candidate that failed the gate, after human review: REASON, your git identity and the "
                    "time are recorded in the candidate's git note (refs/notes/frames) and shown by `frames review`."
                ),
            ),
        ] = None,
        allow_off_front: Annotated[
            bool,
            typer.Option(
                "--allow-off-front",
                help=(
                    "Promote a candidate that passed the gate but is not on the Pareto front (another member is at "
                    "least as good on pass rate and tokens)."
                ),
            ),
        ] = False,
        allow_outdated_base: Annotated[
            bool,
            typer.Option(
                "--allow-outdated-base",
                help="Promote a candidate whose run's base commit is no longer in the history of your current branch.",
            ),
        ] = False,
        repo: RepoOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Create a branch at a candidate that passed the gate. Never moves the checked-out branch,
        never overwrites a branch that points elsewhere (running it again is fine).

        A candidate that failed the gate is refused unless `--override-gate REASON` is given (a
        person accepting a known regression): the branch is made and the override recorded in the
        candidate's note under refs/notes/frames (who, from git's user.name and user.email; when;
        why; the failed categories), with a warning naming the failed categories; `frames review`
        shows the record. S0, unknown candidates and candidates not gated yet are refused even then.

        Also refused, each with its reason: a candidate that passed the gate but is not on the
        front, unless it is the run's recommendation (`--allow-off-front` to promote
        it anyway), and one whose run's base commit is no longer in the history of
        your current branch (rebased or reset since: `--allow-outdated-base`).
        It then says whether merging the branch into your current branch would conflict, and in
        which files (`git merge-tree`, nothing checked out). A warning says when the candidate is not
        the run's recommendation, or is but its evidence is pending (in-sample only), with the
        evidence in words (also `against_recommendation` in the JSON).

        Exit 0; 2 for an unknown or ungated candidate, S0, a failed gate without `--override-gate`,
        an empty REASON, an override without a git identity, a candidate off the front or on an
        outdated base without its option, or an unsafe branch name; 1 when the branch exists at
        another commit or git refuses (a branch made whose override could not be recorded is
        reported so: running the command again records it)."""
        from frames_cli.commands.output import console, emit_json, err_console
        from frames_cli.errors import GitError, InputError
        from frames_cli.evolution.decide.recommend import against
        from frames_cli.evolution.report.story import off_front_reason
        from frames_cli.evolution.round.commit import record_gate_override
        from frames_cli.evolution.state.runs import find_candidate
        from frames_cli.gitstore.store import GitStore
        from frames_cli.workspace.layout import Workspace

        if override_gate is not None and not override_gate.strip():
            raise InputError("--override-gate needs a reason: who reviewed the regression and why it is accepted")
        ws = Workspace.open(repo)
        store = GitStore(ws.root)
        state, cand = find_candidate(ws, candidate, store)
        spec = f"{state.run_id}/{cand.id}"
        if cand.parent_id is None:
            raise InputError(f"{spec} is S0, the run's base commit: nothing to promote")
        name = branch or f"frames/{state.run_id}-{cand.id}"
        overrider = _gate_override(store, spec, cand, override_gate)
        best = state.best()
        recommended = best is not None and best.id == cand.id
        if cand.gate_passed and cand.id not in state.front and not allow_off_front and not recommended:
            raise InputError(
                f"{spec} is not on the front: {off_front_reason(state, cand)}; see `frames front {state.run_id}`, "
                "or promote it anyway with --allow-off-front"
            )
        head = store.resolve("HEAD")
        here = (store.current_branch() or "HEAD").removeprefix("refs/heads/")
        if not store.is_ancestor(state.base, head) and not allow_outdated_base:
            raise InputError(
                f"{spec} was built on {state.base[:12]}, which is no longer in the history of {here}: its branch would "
                "bring back what replaced it. Evolve the current branch instead (`frames evolve`), or promote it "
                "anyway with --allow-outdated-base"
            )
        ref = store.create_branch(name, cand.commit)
        against_run = against(state, cand)
        if against_run:
            err_console().print(f"warning: promoting {spec}: {against_run}", markup=False, soft_wrap=True)
        override = None
        if overrider is not None:
            by, reason, why = overrider
            try:
                override = record_gate_override(store, state, cand, reason=reason, branch=name, by=by)
            except GitError as exc:
                raise GitError(
                    f"branch {name} was made, but the gate override could not be recorded ({exc}); run the same "
                    "command again to record it"
                ) from None
            err_console().print(
                f"warning: {spec} did not pass the gate ({why}); promoted on the override of {override['by']}: "
                f"{override['reason']}",
                markup=False,
            )
        conflicts, problem = merge_check(store, head, cand.commit)
        result = {
            "branch": name, "ref": ref, "commit": cand.commit, "run_id": state.run_id, "candidate": cand.id,
            "gate_override": override, "on_front": cand.id in state.front,
            "base_in_history": store.is_ancestor(state.base, head),
            "merge": {"into": here, "conflicts": conflicts, "checked": problem is None},
            "against_recommendation": against_run,
        }
        if json_out:
            emit_json(result)
            return
        out = console()
        out.print(f"Branch {name} is at {cand.commit[:12]} ({spec}). Merge it with: git merge {name}", markup=False)
        out.print(_merge_line(here, conflicts, problem), markup=False)


def _merge_line(here: str, conflicts: list[str], problem: str | None) -> str:
    """Whether the branch merges cleanly into the current branch `here`, in words."""
    from frames_cli.formatting import plural

    if problem is not None:
        return f"Could not check whether it merges cleanly into {here}: {problem}"
    if conflicts:
        return f"Merging it into {here} would conflict in {plural(len(conflicts), 'file')}: {', '.join(conflicts)}"
    return f"It merges into {here} without conflicts."


def _gate_override(
    store: GitStore, spec: str, cand: Candidate, override_gate: str | None
) -> tuple[Identity, str, str] | None:
    """None for a candidate that passed the gate; for one that failed it, (who overrides it, their reason,
    why it failed). InputError when it failed without `--override-gate`, was never gated, or git knows no
    one to record."""
    from frames_cli.errors import InputError

    if cand.gate_passed:
        return None
    failed = cand.failed_categories()
    broken = cand.gate_details.get("must_pass_broken") or []
    reasons = [
        f"below the floor in {', '.join(failed)}" if failed else "",
        f"must-pass case(s) failed: {', '.join(broken)}" if broken else "",
    ]
    why = "; ".join(r for r in reasons if r) or "not gated"
    if override_gate is None or cand.gate_passed is None:
        then = (
            "or accept it with --override-gate REASON"
            if cand.gate_passed is False
            else "without a gate verdict there is nothing to override"
        )
        raise InputError(f"{spec} did not pass the gate ({why}); see `frames review {spec}`, {then}")
    by = store.user_identity()
    if by is None:
        raise InputError(
            "--override-gate records who accepted the regression, but git knows no identity: set git config "
            "user.name and user.email"
        )
    return by, override_gate.strip(), why


def merge_check(store: GitStore, head: str, commit: str) -> tuple[list[str], str | None]:
    """(files that merging `commit` into `head` would conflict in, None) or ([], why git could not tell)."""
    from frames_cli.errors import GitError

    try:
        return store.merge_conflicts(head, commit), None
    except GitError as exc:
        return [], str(exc)

