"""`frames publish`: a finished run's review branch and its notes
pushed to a remote, and the pull-request description written.

The forge's own CLI opens the pull request (`gh pr create --body-file`, `glab mr create`); the
shipped CI examples (examples/ci/) show how. Publishing the same run again updates what it
published: the branch is fast-forwarded (or left alone when people pushed on top of it), the notes
are merged with the remote's, and the description is written again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from frames_cli.errors import InputError
from frames_cli.evolution.state.records import Candidate, RunState
from frames_cli.evolution.state.run_ids import BASE_ID
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.layout import Workspace

#: The description's file name in the run's folder, unless `--body-file` names another.
BODY_FILE = "pull-request.md"


@dataclass(frozen=True)
class Publication:
    """What `publish_run` did.

    Attributes:
        run_id: the run published.
        remote: the remote as the user named it.
        branch: the review branch's name (`frames/<run>`), or None when the run made none
            (nothing was pushed then).
        candidate, commit: the member the branch holds.
        title: a one-line pull-request title.
        body_file: where the description was written (None when nothing was published).
        branch_action: `BranchPush.action` ("created", "updated", "replaced", "unchanged",
            "behind"), or "deleted" when an earlier publication's branch is gone from the remote
            (merged or closed there) and was not pushed again.
        notes_action: "pushed", "merged" (with notes only the remote had), "unchanged" or "none".
        reason: why nothing was published, when so.
        base: the branch checked out here, which the pull request would merge into (None on a
            detached HEAD, as in CI: the job names its base itself).
        base_on_remote: whether `remote` has that branch; a pull request on a remote without it
            has nothing to merge into (push it first).
    """

    run_id: str
    remote: str
    branch: str | None = None
    candidate: str | None = None
    commit: str | None = None
    title: str | None = None
    body_file: str | None = None
    branch_action: str | None = None
    notes_action: str | None = None
    reason: str | None = None
    base: str | None = None
    base_on_remote: bool | None = None

    def to_json(self) -> dict[str, Any]:
        """The fields as a JSON object (`frames publish --json`)."""
        return asdict(self)


def pull_request_title(state: RunState, best: Candidate) -> str:
    """One line: the run, the member and its pass rate against S0 on the cases it was chosen on."""
    from frames_cli.formatting import pct

    base = next((c for c in state.candidates if c.id == BASE_ID), None)
    gain = f": pass rate {pct(base.pass_rate)} → {pct(best.pass_rate)}" if base is not None else ""
    return f"frames: evolved skills from run {state.run_id} ({best.id}{gain})"


def pull_request_body(ws: Workspace, store: GitStore, state: RunState, best: Candidate, branch: str) -> str:
    """The description: the candidate's review (`frames review --markdown`) with how to look at it locally."""
    from frames_cli.evolution.report.review import build_review
    from frames_cli.evolution.report.review_markdown import review_markdown
    from frames_cli.sanitize import for_terminal

    review = for_terminal(review_markdown(build_review(ws, store, state, best)))
    return (
        f"Made by `frames evolve` (run {state.run_id}) and published with `frames publish`. Merge this pull request to "
        f"deploy the skills of {best.id}; close it to decline them.\n\n{review}\nTo look at it locally: "
        f"`git fetch origin refs/notes/frames:refs/notes/frames {branch}` then `git log -p --notes=frames {branch}`, "
        f"or `frames review {state.run_id}/{best.id}` in a clone that holds the run.\n"
    )


def publish_run(ws: Workspace, store: GitStore, state: RunState, remote: str, *, again: bool = False,
                candidate: Candidate | None = None) -> tuple[Publication, str | None]:
    """Push the run's review branch and refs/notes/frames to `remote`, and make the description.

    Args:
        remote: a configured remote's name, or a URL or path (checked by `GitStore.check_remote`).
        candidate: publish the branch `frames promote` made of this member (`frames/<run>-<id>`)
            instead of the run's review branch: a person's choice where the run recommended none
            or another.
        again: push a branch that an earlier publication put on this remote and that is gone
            from it since (a merged or closed pull request's branch is usually deleted).

    Returns:
        What was done, and the pull-request description (None when nothing was published: the
        run made no review branch, or its branch was deleted on the remote).

    Raises:
        InputError: the run is not finished, `remote` names no remote, or `candidate` has no
            branch (promote it first) (exit 2).
        GitError: the remote cannot be reached, refused the push, or holds a person's commit on
            the branch that the run's commit does not contain (exit 1).
    """
    from frames_cli.evolution.round.commit import merge_note_texts, published_to, record_publication

    if state.status != "finished":
        raise InputError(
            f"run {state.run_id} is {state.status}, not finished: run `frames evolve` to finish it, then publish"
        )
    store.check_remote(remote)
    best, branch = state.best(), state.branch
    if candidate is not None:
        branch = f"frames/{state.run_id}-{candidate.id}"
        if store.list_refs(f"refs/heads/{branch}").get(f"refs/heads/{branch}") != candidate.commit:
            raise InputError(
                f"{state.run_id}/{candidate.id} has no branch {branch} at its commit: make it with "
                f"`frames promote {state.run_id}/{candidate.id}` first (promote checks the gate and the front)"
            )
        best = candidate
    if branch is None or best is None or best.parent_id is None:
        return Publication(
            state.run_id, remote,
            reason=f"run {state.run_id} made no review branch (no member beat S0 by more than noise); "
            "nothing to publish (a member a person chose: `frames promote`, then `frames publish --candidate`)",
        ), None
    label = store.remote_label(remote)
    synced = store.sync_notes(remote, merge_note_texts)
    title = pull_request_title(state, best)
    if (
        store.remote_sha(remote, f"refs/heads/{branch}") is None and published_to(store, best, branch, label)
        and not again
    ):
        return Publication(
            state.run_id, remote, branch, best.id, best.commit, title, branch_action="deleted",
            reason=f"{branch} was published to {label} before and is gone from it since (merged or closed); "
            "not pushed again (--again to push it anyway)",
        ), None
    ours = {c.commit for c in state.candidates if c.commit and c.parent_id is not None}
    pushed = store.push_branch(remote, branch, best.commit, replaceable=lambda sha: sha in ours)
    record_publication(store, state, best, branch=branch, remote=label)
    notes = store.push_notes(remote, merge_note_texts)
    if synced and notes == "pushed":
        notes = "merged"
    body = pull_request_body(ws, store, state, best, branch)
    here = store.current_branch()
    base = here.removeprefix("refs/heads/") if here else None
    on_remote = None if here is None else store.remote_sha(remote, here) is not None
    return Publication(state.run_id, remote, branch, best.id, best.commit, title, None, pushed.action, notes,
                       base=base, base_on_remote=on_remote), body
