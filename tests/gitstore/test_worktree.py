"""The coldstart commit on the user's branch: only the named paths, the user's other work untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from frames_cli.errors import GitError
from frames_cli.gitstore.worktree import commit_paths, is_git_worktree


def test_commits_only_the_named_paths(git_repo) -> None:
    root = git_repo.root
    git_repo.write("README.md", "user's unstaged edit\n")
    git_repo.write("notes.txt", "user's staged file\n")
    git_repo.git("add", "notes.txt")
    git_repo.write("skills/gamma/SKILL.md", "---\nname: gamma\n---\nG\n")
    (root / "skills" / "alpha" / "SKILL.md").unlink()

    sha = commit_paths(root, ["skills/gamma/SKILL.md", "skills/alpha/SKILL.md"], "frames coldstart: test\n")
    assert sha == git_repo.git("rev-parse", "HEAD")
    assert git_repo.git("show", "--name-status", "--format=", "HEAD").splitlines() == ["D\tskills/alpha/SKILL.md", "A\tskills/gamma/SKILL.md"]
    # The user's git identity is set (the fixture repo's user.name): the commit is theirs (issue 13).
    assert git_repo.git("log", "-1", "--format=%an <%ae>|%cn|%s") == "Test User <test@example.com>|Test User|frames coldstart: test"
    # The user's staged file is still staged (not committed), their unstaged edit still unstaged.
    assert git_repo.git("status", "--porcelain").splitlines() == [" M README.md", "A  notes.txt"]


def test_nothing_to_commit_returns_none(git_repo) -> None:
    head = git_repo.git("rev-parse", "HEAD")
    assert commit_paths(git_repo.root, ["skills/alpha/SKILL.md", "skills/never-tracked/SKILL.md"], "x\n") is None
    assert git_repo.git("rev-parse", "HEAD") == head


def test_workspace_in_a_sub_folder_and_no_identity(git_repo, monkeypatch, tmp_path: Path) -> None:
    # No global or repository identity: the committer falls back to frames, passed per call.
    git_repo.git("config", "--unset", "user.name")
    git_repo.git("config", "--unset", "user.email")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_COMMITTER_NAME", raising=False)
    monkeypatch.delenv("GIT_COMMITTER_EMAIL", raising=False)
    git_repo.write("team/ws/skills/a/SKILL.md", "---\nname: a\n---\n")
    commit_paths(git_repo.root / "team" / "ws", ["skills/a/SKILL.md"], "sub-folder\n")
    assert git_repo.git("log", "-1", "--format=%an|%cn|%s", "--name-only") == "frames|frames|sub-folder\n\nteam/ws/skills/a/SKILL.md"


def test_not_a_repository(tmp_path: Path) -> None:
    assert not is_git_worktree(tmp_path)
    with pytest.raises(GitError, match="not a git repository"):
        commit_paths(tmp_path, ["skills/a/SKILL.md"], "x\n")
