"""The coldstart and adopt commit on the user's branch: only the touched paths, the user's other work
untouched, and a commit git refuses or a run killed half-way leaving nothing stranded (issue 29).

Invariants, one assertion block each:
1. only the touched paths are committed; the user's staged and unstaged work stays as it was;
2. a refused commit (hook, signing, lock) puts every file back and stages nothing;
3. a repository git would not commit in cleanly is refused before anything is written;
4. a run killed at any point is finished or undone by the next one;
5. no git command gets the paths as arguments (no argument-list limit).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.errors import GitError
from frames_cli.gitstore.pending import Journal
from frames_cli.gitstore.committable import check_committable, is_git_worktree
from frames_cli.gitstore.worktree import CheckoutChange, finish_pending


def change_files(root: Path, state: Path, files: dict[str, str | None],
                 message: str = "frames coldstart: test\n") -> str | None:
    """Write (None: remove) `files` under `root` as coldstart does, and commit them."""
    change = CheckoutChange.begin(root, state, "coldstart")
    change.touch(list(files))
    for rel, text in files.items():
        path = root / rel
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return change.commit(message)


def status(repo) -> list[str]:
    return repo.git("status", "--porcelain", "--untracked-files=all").splitlines()


def test_commits_only_the_touched_paths(git_repo, tmp_path: Path) -> None:
    root = git_repo.root
    git_repo.write("README.md", "user's unstaged edit\n")
    git_repo.write("notes.txt", "user's staged file\n")
    git_repo.git("add", "notes.txt")

    sha = change_files(root, tmp_path / "state",
                       {"skills/gamma/SKILL.md": "---\nname: gamma\n---\nG\n", "skills/alpha/SKILL.md": None})
    assert sha == git_repo.git("rev-parse", "HEAD")
    assert git_repo.git("show", "--name-status", "--format=", "HEAD").splitlines() == [
        "D\tskills/alpha/SKILL.md",
        "A\tskills/gamma/SKILL.md",
    ]
    # The user's git identity is set (the fixture repo's user.name): the commit is theirs (issue 13).
    assert (
        git_repo.git("log", "-1", "--format=%an <%ae>|%cn|%s")
        == "Test User <test@example.com>|Test User|frames coldstart: test"
    )
    # The user's staged file is still staged (not committed), their unstaged edit still unstaged,
    # and the committed paths are clean in the index.
    assert status(git_repo) == [" M README.md", "A  notes.txt"]
    assert not (tmp_path / "state" / "pending-commit").exists()


def test_nothing_to_commit_returns_none(git_repo, tmp_path: Path) -> None:
    head = git_repo.git("rev-parse", "HEAD")
    assert change_files(git_repo.root, tmp_path / "s", {"skills/alpha/SKILL.md": "---\nname: alpha\n---\nAlpha body.\n",
                                                        "skills/never/SKILL.md": None}) is None
    assert git_repo.git("rev-parse", "HEAD") == head


def test_workspace_in_a_sub_folder_and_no_identity(git_repo, monkeypatch, tmp_path: Path) -> None:
    # No global or repository identity: the committer falls back to frames, passed per call.
    git_repo.git("config", "--unset", "user.name")
    git_repo.git("config", "--unset", "user.email")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_COMMITTER_NAME", raising=False)
    monkeypatch.delenv("GIT_COMMITTER_EMAIL", raising=False)
    (git_repo.root / "team" / "ws").mkdir(parents=True)
    change_files(git_repo.root / "team" / "ws", tmp_path / "s", {"skills/a/SKILL.md": "---\nname: a\n---\n"},
                 "sub-folder\n")
    assert (
        git_repo.git("log", "-1", "--format=%an|%cn|%s", "--name-only")
        == "frames|frames|sub-folder\n\nteam/ws/skills/a/SKILL.md"
    )


def test_not_a_repository(tmp_path: Path) -> None:
    assert not is_git_worktree(tmp_path)
    with pytest.raises(GitError, match="not a git repository"):
        CheckoutChange.begin(tmp_path, tmp_path / ".frames", "coldstart")


@pytest.mark.parametrize("refusal", ["hook", "gpgsign", "commit-msg"])
def test_a_refused_commit_puts_every_file_back_and_stages_nothing(git_repo, tmp_path: Path, refusal: str) -> None:
    root = git_repo.root
    git_repo.write("skills/alpha/SKILL.md", "user's own uncommitted edit\n")
    git_repo.write("staged.txt", "staged\n")
    git_repo.git("add", "staged.txt")
    before = status(git_repo)
    if refusal == "gpgsign":
        git_repo.git("config", "commit.gpgsign", "true")
        git_repo.git("config", "gpg.program", str(tmp_path / "no-such-gpg"))
    else:
        hook = root / ".git" / "hooks" / ("pre-commit" if refusal == "hook" else "commit-msg")
        hook.write_text("#!/bin/sh\necho 'lint: skills/gamma/SKILL.md is too long' >&2\nexit 1\n")
        hook.chmod(0o755)
    with pytest.raises(GitError) as info:
        change_files(root, tmp_path / "s", {"skills/gamma/SKILL.md": "new\n", "skills/alpha/SKILL.md": "frames' text\n",
                                            "skills/beta/SKILL.md": None})
    message = str(info.value)
    assert (
        "git refused the commit" in message
        and "put back the 3 file(s)" in message
        and "run `frames coldstart` again" in message
    )
    assert (
        ("commit.gpgsign false" in message)
        if refusal == "gpgsign"
        else ("is too long" in message and "hook" in message)
    )
    # Every file as it was, nothing staged that was not, no journal left.
    assert (root / "skills" / "alpha" / "SKILL.md").read_text() == "user's own uncommitted edit\n"
    assert (root / "skills" / "beta" / "SKILL.md").read_text() == "---\nname: beta\n---\nBeta body.\n"
    assert not (root / "skills" / "gamma").exists()
    assert status(git_repo) == before
    assert Journal.read(tmp_path / "s") is None


def test_repositories_git_would_not_commit_in_are_refused_before_writing(git_repo, tmp_path: Path) -> None:
    root = git_repo.root
    (root / ".git" / "index.lock").write_text("")
    with pytest.raises(GitError, match=r"index is locked .*delete that file"):
        check_committable(root)
    (root / ".git" / "index.lock").unlink()
    (root / ".git" / "MERGE_HEAD").write_text(git_repo.git("rev-parse", "HEAD") + "\n")
    with pytest.raises(GitError, match="middle of a merge"):
        check_committable(root)
    (root / ".git" / "MERGE_HEAD").unlink()
    git_repo.write("other/x.txt", "x\n")
    git_repo.git("add", "other")
    git_repo.git("commit", "-q", "-m", "other")
    git_repo.git("sparse-checkout", "set", "other")
    with pytest.raises(GitError, match=r"skills/ lies outside this sparse checkout.*git sparse-checkout add skills"):
        check_committable(root)
    git_repo.git("sparse-checkout", "add", "skills")
    check_committable(root)


def test_a_run_killed_while_writing_is_undone_by_the_next(git_repo, tmp_path: Path) -> None:
    root, state = git_repo.root, tmp_path / "s"
    change = CheckoutChange.begin(root, state, "adopt")
    change.touch(["skills/alpha/SKILL.md", "skills/new/SKILL.md"])
    (root / "skills" / "alpha" / "SKILL.md").write_text("half\n")
    (root / "skills" / "new").mkdir()
    (root / "skills" / "new" / "SKILL.md").write_text("half\n")
    (root / "skills" / "alpha" / ".SKILL.md.x1y2z3.tmp").write_text("half of an atomic write")
    # ... killed here: the next run finds the journal.
    done = finish_pending(root, state)
    assert done is not None and done.action == "undone" and done.files == 2 and "adopt" in str(done)
    assert status(git_repo) == [] and not (root / "skills" / "new").exists()
    assert finish_pending(root, state) is None


def test_a_run_killed_before_its_commit_is_committed_by_the_next(git_repo, tmp_path: Path) -> None:
    root, state = git_repo.root, tmp_path / "s"
    change = CheckoutChange.begin(root, state, "coldstart")
    change.touch(["skills/gamma/SKILL.md"])
    git_repo.write("skills/gamma/SKILL.md", "gamma\n")
    change.journal.mark_written("frames coldstart: 1 skill(s)\n", None)
    # ... killed before `git commit`: the next run makes the commit with the journal's message.
    done = finish_pending(root, state)
    assert done is not None and done.action == "committed"
    assert git_repo.git("log", "-1", "--format=%H %s") == f"{done.sha} frames coldstart: 1 skill(s)"
    assert status(git_repo) == []


def test_a_commit_git_made_after_frames_was_killed_is_kept(git_repo, tmp_path: Path) -> None:
    from frames_cli.gitstore import worktree

    root, state = git_repo.root, tmp_path / "s"
    change = CheckoutChange.begin(root, state, "coldstart")
    change.touch(["skills/gamma/SKILL.md"])
    git_repo.write("skills/gamma/SKILL.md", "gamma\n")
    change.journal.mark_written("frames coldstart: gamma\n", None)
    # git runs in its own session: killing frames does not stop it, and it makes the commit.
    sha = worktree._commit(change._repo, ["skills/gamma/SKILL.md"], "frames coldstart: gamma\n", None)
    # The index never got the entry: a `git commit` now would delete the file again.
    assert status(git_repo) == ["D  skills/gamma/SKILL.md", "?? skills/gamma/SKILL.md"]
    done = finish_pending(root, state)
    assert done is not None and done.action == "found-committed" and done.sha == sha
    assert git_repo.git("rev-list", "--count", "HEAD") == "2" and status(git_repo) == []


def test_no_git_command_gets_the_paths_as_arguments(git_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from frames_cli.gitstore.repo import GitRepo

    longest: list[int] = []
    real = GitRepo._run

    def recording(self, *args, **kw):  # type: ignore[no-untyped-def]
        longest.append(sum(len(a) for a in args))
        return real(self, *args, **kw)

    monkeypatch.setattr(GitRepo, "_run", recording)
    files = {f"skills/s{i:04d}-{'x' * 40}/SKILL.md": f"skill {i}\n" for i in range(600)}
    sha = change_files(git_repo.root, tmp_path / "s", files)
    assert sha and len(git_repo.git("show", "--name-only", "--format=", "HEAD").splitlines()) == 600
    assert max(longest) < 1000


def test_validate_warns_of_a_change_left_pending(git_repo) -> None:
    from typer.testing import CliRunner

    from frames_cli.commands.app import app

    (git_repo.root / "frames.yaml").write_text("version: 1\n")
    change = CheckoutChange.begin(git_repo.root, git_repo.root / ".frames", "coldstart")
    change.touch(["skills/alpha/SKILL.md"])
    result = CliRunner().invoke(app, ["validate", "--repo", str(git_repo.root)])
    assert (
        ".frames/pending-commit: warning: an earlier `frames coldstart` or `frames adopt` was stopped" in result.stdout
    )


def test_an_index_the_commit_cannot_reach_moves_the_branch_back(git_repo, tmp_path: Path) -> None:
    # A hook leaving git's index locked after the commit: the commit stood while `git status` showed
    # its files as deleted and untracked. Now the branch goes back and the files too.
    root = git_repo.root
    head = git_repo.git("rev-parse", "HEAD")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\ntouch .git/index.lock\n")
    hook.chmod(0o755)
    with pytest.raises(GitError, match="moved the branch back"):
        change_files(root, tmp_path / "s", {"skills/gamma/SKILL.md": "gamma\n"})
    (root / ".git" / "index.lock").unlink()
    assert git_repo.git("rev-parse", "HEAD") == head and status(git_repo) == [] and Journal.read(tmp_path / "s") is None


def test_a_foreign_or_hostile_journal_finishes_nothing_and_blocks_nothing(git_repo, tmp_path: Path) -> None:
    import json

    state = tmp_path / "s"
    (state / "pending-commit").mkdir(parents=True)
    lines = [{"kind": "begin", "version": 1, "command": "coldstart", "head": None},
             {"kind": "touch", "path": "../../escape.txt", "copy": None},
             {"kind": "touch", "path": "skills/alpha/SKILL.md", "copy": "0"}]
    (state / "pending-commit" / "journal.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = finish_pending(git_repo.root, state)  # the copy of alpha's text is missing: left as it is
    assert done is not None and done.action == "undone" and not (tmp_path / "escape.txt").exists()
    assert (git_repo.root / "skills" / "alpha" / "SKILL.md").exists()
    (state / "pending-commit").mkdir()
    (state / "pending-commit" / "journal.jsonl").write_text("{torn")
    assert change_files(git_repo.root, state, {"skills/gamma/SKILL.md": "gamma\n"}) is not None
    (state / "pending-commit").write_text("a file, not a folder")
    assert change_files(git_repo.root, state, {"skills/delta/SKILL.md": "delta\n"}) is not None
