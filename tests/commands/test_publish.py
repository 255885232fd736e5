"""`frames publish [REMOTE]` to a bare remote, after a real `frames evolve` on the simulator.

Invariants:
1. Publishing carries the review branch (at the run's best member) and refs/notes/frames to the
   remote, and writes the pull-request description (the best member's review).
2. Publishing again updates, never duplicates: one branch on the remote; a remote branch at an
   ancestor is fast-forwarded; commits people pushed on top are left as they are; notes another
   host pushed meanwhile are kept, and a commit both noted carries both runs.
3. A branch published before and deleted on the remote since is not pushed again without --again.
4. Nothing is overwritten that frames did not make: a foreign commit on the branch exits 1 and
   stays; a run without a review branch publishes nothing (exit 0); an unknown remote exits 2.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frames_cli.commands.app import app

from helpers.remote import git, remote_refs

runner = CliRunner()


@pytest.fixture
def world(evolved_template, tmp_path: Path) -> tuple[Path, Path, dict]:
    """(workspace copy, empty bare remote `origin`, the run's deploy menu)."""
    template, menu = evolved_template
    root = tmp_path / "ws"
    shutil.copytree(template, root, symlinks=True)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(root, "remote", "add", "origin", str(bare))
    return root, bare, menu


def publish(root: Path, *args: str):
    return runner.invoke(app, ["publish", "--repo", str(root), *args])


def note(repo: Path, commit: str) -> dict:
    return json.loads(git(repo, "notes", "--ref", "refs/notes/frames", "show", commit))


def test_publish_carries_the_branch_and_notes_and_writes_the_description(world) -> None:
    root, bare, menu = world
    run, branch = menu["run_id"], menu["branch"]
    best = git(root, "rev-parse", f"refs/heads/{branch}")

    done = publish(root, "--json")

    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert (out["branch"], out["commit"], out["branch_action"], out["notes_action"]) == (
        branch,
        best,
        "created",
        "pushed",
    )
    refs = remote_refs(bare)
    assert refs[f"refs/heads/{branch}"] == best
    assert refs["refs/notes/frames"] == git(root, "rev-parse", "refs/notes/frames")
    remote_note = note(bare, best)
    assert run in remote_note["runs"]
    assert remote_note["published"][0] | {"at": None} == {
        "run": run, "candidate": out["candidate"], "branch": branch, "remote": str(bare), "commit": best, "at": None}
    body = Path(out["body_file"]).read_text(encoding="utf-8")
    assert Path(out["body_file"]) == root / ".frames" / "runs" / run / "pull-request.md"
    assert f"## frames candidate {out['candidate']}" in body and "```diff" in body
    assert out["title"].startswith(f"frames: evolved skills from run {run} ({out['candidate']}: pass rate ")
    assert (out["base"], out["base_on_remote"]) == ("main", False)
    # A remote without the branch the pull request merges into is named (found by a newcomer).
    told = publish(root)
    assert "warning: origin has no branch main" in told.stderr and "git push origin main" in told.stderr
    assert "gh pr create --base main --head " in told.stdout
    git(root, "push", "-q", "origin", "main")
    assert "has no branch" not in publish(root).stderr


def test_publishing_again_updates_and_never_duplicates(world, tmp_path: Path) -> None:
    root, bare, menu = world
    branch = menu["branch"]
    best = git(root, "rev-parse", f"refs/heads/{branch}")
    parent = git(root, "rev-parse", f"{best}^")
    # An earlier state of the branch on the remote: the best member's parent commit.
    git(root, "push", "-q", "origin", f"{parent}:refs/heads/{branch}")
    first = json.loads(publish(root, "--json").stdout)
    assert first["branch_action"] == "updated" and remote_refs(bare)[f"refs/heads/{branch}"] == best

    again = publish(root)
    assert again.exit_code == 0, again.output
    assert f"Published {branch}" in again.stdout and "already up to date" in again.stdout

    # Another host (a CI job in a fresh clone) adds its own run to the base commit's note while
    # this workspace adds another run of its own, and a reviewer pushes a follow-up commit onto
    # the review branch.
    base = git(root, "rev-parse", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    git(other, "fetch", "-q", "origin", "refs/notes/frames:refs/notes/frames")
    git(other, "config", "user.email", "r@example.com")
    git(other, "config", "user.name", "Reviewer")
    for repo, run in ((other, "other-run"), (root, "local-run")):
        mine = note(repo, base)
        mine["runs"][run] = {"pass_rate": 0.5}
        git(repo, "notes", "--ref", "refs/notes/frames", "add", "-f", "-m", json.dumps(mine), base)
    git(other, "checkout", "-q", branch)
    (other / "review.txt").write_text("follow-up\n")
    git(other, "add", "review.txt")
    git(other, "commit", "-q", "-m", "reviewer follow-up")
    git(other, "push", "-q", "origin", branch, "refs/notes/frames")
    follow_up = git(other, "rev-parse", "HEAD")

    third = publish(root, "--json")
    assert third.exit_code == 0, third.output
    out = json.loads(third.stdout)
    assert out["branch_action"] == "behind" and out["notes_action"] == "merged"
    refs = remote_refs(bare)
    assert refs[f"refs/heads/{branch}"] == follow_up
    assert [r for r in refs if r.startswith("refs/heads/frames/")] == [f"refs/heads/{branch}"]
    assert {"other-run", "local-run", menu["run_id"]} <= set(note(bare, base)["runs"])
    assert git(bare, "merge-base", "--is-ancestor", git(other, "rev-parse", "refs/notes/frames"),
               "refs/notes/frames") == ""


def test_a_branch_deleted_on_the_remote_is_not_pushed_again(world) -> None:
    root, bare, menu = world
    branch = menu["branch"]
    assert publish(root).exit_code == 0
    git(bare, "update-ref", "-d", f"refs/heads/{branch}")

    skipped = publish(root, "--json")
    assert skipped.exit_code == 0, skipped.output
    out = json.loads(skipped.stdout)
    assert out["branch_action"] == "deleted" and "--again" in out["reason"] and out["body_file"] is None
    assert f"refs/heads/{branch}" not in remote_refs(bare)

    assert json.loads(publish(root, "--again", "--json").stdout)["branch_action"] == "created"
    assert f"refs/heads/{branch}" in remote_refs(bare)


def test_a_foreign_commit_on_the_branch_is_never_overwritten(world) -> None:
    root, bare, menu = world
    branch = menu["branch"]
    foreign = git(root, "rev-parse", "main")
    git(root, "commit", "-q", "--allow-empty", "-m", "someone else's work")
    foreign = git(root, "rev-parse", "HEAD")
    git(root, "push", "-q", "origin", f"{foreign}:refs/heads/{branch}")

    refused = publish(root)

    assert refused.exit_code == 1
    assert "a commit frames did not make" in refused.stderr
    assert remote_refs(bare)[f"refs/heads/{branch}"] == foreign


def test_unknown_remote_and_unfinished_or_branchless_runs(world) -> None:
    root, bare, menu = world
    unknown = publish(root, "upstream")
    assert unknown.exit_code == 2 and "no remote named 'upstream' (configured: origin)" in unknown.stderr

    state_file = root / ".frames" / "runs" / menu["run_id"] / "state.json"
    state = json.loads(state_file.read_text())
    state_file.write_text(json.dumps({**state, "branch": None}))
    nothing = publish(root, "--json")
    assert nothing.exit_code == 0, nothing.output
    assert json.loads(nothing.stdout)["branch"] is None and remote_refs(bare) == {}

    state_file.write_text(json.dumps({**state, "status": "stopped"}))
    unfinished = publish(root)
    assert unfinished.exit_code == 2 and "is stopped, not finished" in unfinished.stderr


def test_a_member_a_person_promoted_is_published_with_candidate(world) -> None:
    root, bare, menu = world
    state_file = root / ".frames" / "runs" / menu["run_id"] / "state.json"
    state = json.loads(state_file.read_text())
    state_file.write_text(json.dumps({**state, "branch": None}))  # the run recommended no member
    best = json.loads(publish(root, "--json").stdout)
    assert best["branch"] is None and "frames publish --candidate" in best["reason"]
    member = next(cid for cid in state["front"] if cid not in ("r0c0", "S0"))

    unpromoted = publish(root, "--candidate", member)
    assert unpromoted.exit_code == 2 and f"frames promote {menu['run_id']}/{member}" in unpromoted.stderr

    assert runner.invoke(app, ["promote", member, "--repo", str(root)]).exit_code == 0
    done = publish(root, "--candidate", member, "--json")
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    branch = f"frames/{menu['run_id']}-{member}"
    assert out["branch"] == branch and out["candidate"] == member
    assert remote_refs(bare)[f"refs/heads/{branch}"] == git(root, "rev-parse", branch)
