"""GitStore.resolve and read_files on a real temporary repository."""

from __future__ import annotations

import pytest

from frames_cli.errors import GitError
from frames_cli.gitstore.store import GitStore


def test_resolve_names_commits(git_repo):
    head = git_repo.git("rev-parse", "HEAD")
    store = GitStore(git_repo.root)
    assert store.resolve("HEAD") == head
    assert store.resolve("main") == head
    assert store.resolve(head[:8]) == head


@pytest.mark.parametrize("bad", ["", "--all", "-h", "no-such-branch", "HEAD:skills"])
def test_resolve_rejects_options_and_unknown(git_repo, bad):
    with pytest.raises(GitError):
        GitStore(git_repo.root).resolve(bad)


def test_not_a_repository(tmp_path, git_repo, monkeypatch):
    with pytest.raises(GitError, match="not a git repository"):
        GitStore(tmp_path)
    # Run from inside a repository: a missing folder must not silently open that one.
    monkeypatch.chdir(git_repo.root)
    with pytest.raises(GitError, match="no such folder"):
        GitStore(tmp_path / "missing")


def test_read_files_reads_committed_tree_not_working_tree(git_repo):
    (git_repo.root / "skills" / "alpha" / "SKILL.md").write_text("edited, not committed\n")
    files = GitStore(git_repo.root).read_files("HEAD")
    assert files == {
        "skills/alpha/SKILL.md": b"---\nname: alpha\n---\nAlpha body.\n",
        "skills/beta/SKILL.md": b"---\nname: beta\n---\nBeta body.\n",
        "skills/beta/scripts/run.sh": b"#!/bin/sh\necho hi\n",
    }


def test_read_files_prefixes(git_repo):
    store = GitStore(git_repo.root)
    assert set(store.read_files("HEAD", "skills/beta")) == {"skills/beta/SKILL.md", "skills/beta/scripts/run.sh"}
    assert "README.md" in store.read_files("HEAD", "")
    assert store.read_files("HEAD", "nowhere/") == {}
    assert store.read_files("HEAD", "README.md") == {}


def test_unknown_revision_is_bad_input_and_still_a_git_error(git_repo, tmp_path):
    from frames_cli.errors import EXIT_USAGE, UnknownRevisionError
    from helpers import init_git_repo

    with pytest.raises(UnknownRevisionError) as caught:
        GitStore(git_repo.root).resolve("no-such-branch")
    assert caught.value.exit_code == EXIT_USAGE and isinstance(caught.value, GitError)
    assert str(caught.value) == "unknown revision or not a commit: 'no-such-branch'"
    empty = init_git_repo(tmp_path / "empty")
    with pytest.raises(UnknownRevisionError,
                       match=r"^unknown revision 'HEAD': the repository has no commit yet \(commit your skills first"):
        GitStore(empty.root).resolve("HEAD")
