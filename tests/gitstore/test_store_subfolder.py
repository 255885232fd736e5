"""GitStore for a workspace in a subfolder of its repository (a monorepo), on real repositories.

Invariants:
1. Paths in and out of GitStore are workspace-relative: read_files, commit_files, diff and diff_stat
   see the workspace's folder only, and name files as they are named at the top level.
2. A commit changes files under the workspace's folder only; the rest of the parent's tree (another
   team's workspace) stays byte for byte the same, a folder name with a space included.
3. The notes lock makes concurrent note edits from two processes (two workspaces' runs) lose nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from helpers import init_git_repo

from frames_cli.errors import InputError
from frames_cli.gitstore.store import GitStore

WS = "teams/air x"  # a space in a folder name, as a user's folder may have


@pytest.fixture
def mono(tmp_path):
    """A repository with the workspace `teams/air x/` and another team's `teams/sea/`, both with skills."""
    repo = init_git_repo(tmp_path / "mono")
    repo.write(f"{WS}/skills/alpha/SKILL.md", "---\nname: alpha\n---\nAlpha.\n")
    repo.write(f"{WS}/frames.yaml", "version: 1\n")
    repo.write("teams/sea/skills/alpha/SKILL.md", "---\nname: alpha\n---\nSea alpha.\n")
    repo.write("skills/top/SKILL.md", "---\nname: top\n---\nTop level.\n")
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "two teams")
    return repo


def outside(repo, sha: str) -> list[str]:
    """`git ls-tree -r` entries (mode, blob sha, path) of commit `sha` outside the workspace's folder."""
    entries = repo.git("ls-tree", "-r", "-z", "--full-tree", sha).split("\0")
    return [e for e in entries if e and not e.split("\t", 1)[1].startswith(f"{WS}/")]


def test_paths_are_workspace_relative(mono):
    store = GitStore(mono.root / WS)
    assert (store.root, store.prefix) == (mono.root.resolve(), f"{WS}/")
    assert (store.repo_path("skills/a/SKILL.md"), store.repo_path("")) == (f"{WS}/skills/a/SKILL.md", WS)
    assert (store.workspace_path(f"{WS}/skills/a"), store.workspace_path("teams/sea/skills/a")) == ("skills/a", None)
    assert store.read_files("HEAD") == {"skills/alpha/SKILL.md": b"---\nname: alpha\n---\nAlpha.\n"}
    assert set(store.read_files("HEAD", "")) == {"frames.yaml", "skills/alpha/SKILL.md"}
    top = GitStore(mono.root)
    assert set(top.read_files("HEAD")) == {"skills/top/SKILL.md"}


def test_commit_changes_only_the_workspace_folder(mono):
    store = GitStore(mono.root / WS)
    base = store.resolve("HEAD")
    sha = store.commit_files(
        base,
        {"skills/alpha/SKILL.md": b"---\nname: alpha\n---\nAlpha, rewritten.\n", "skills/beta/SKILL.md": b"beta\n"},
        "rewrite", under="skills/",
    )
    assert outside(mono, sha) == outside(mono, base)
    assert mono.git("diff", "--name-only", base, sha).splitlines() == [f"{WS}/skills/alpha/SKILL.md",
                                                                       f"{WS}/skills/beta/SKILL.md"]
    assert store.read_files(sha)["skills/beta/SKILL.md"] == b"beta\n"
    # The `under` guard and the path checks see workspace-relative paths: nothing can leave the folder.
    for path in ("frames.yaml", "../sea/skills/alpha/SKILL.md"):
        with pytest.raises(InputError):
            store.commit_files(base, {path: b"x\n"}, "escape", under="skills/")
    with pytest.raises(InputError):
        store.commit_files(base, {"../sea/skills/alpha/SKILL.md": b"x\n"}, "escape")


def test_diffs_show_only_the_workspace_with_its_own_paths(mono):
    store = GitStore(mono.root / WS)
    base = store.resolve("HEAD")
    # Another team's change lands between the two commits: it must not show in this workspace's diff.
    mono.write("teams/sea/skills/alpha/SKILL.md", "changed by the sea team\n")
    mono.write(f"{WS}/skills/alpha/SKILL.md", "---\nname: alpha\n---\nAlpha.\nOne more rule.\n")
    mono.git("commit", "-q", "-am", "both teams")
    stat = store.diff_stat(base, "HEAD")
    assert [(f.path, f.added, f.deleted) for f in stat.files] == [("skills/alpha/SKILL.md", 1, 0)]
    text = store.diff(base, "HEAD")
    assert "+++ b/skills/alpha/SKILL.md" in text and "sea" not in text and WS not in text
    assert [f.path for f in store.diff_stat(base, "HEAD", paths=("",)).files] == ["skills/alpha/SKILL.md"]
    assert [f.path for f in GitStore(mono.root).diff_stat(base, "HEAD", paths=("",)).files] == [
        "teams/air x/skills/alpha/SKILL.md", "teams/sea/skills/alpha/SKILL.md",
    ]


EDITOR = textwrap.dedent(
    """
    import json, sys
    from frames_cli.gitstore.store import GitStore

    store, who = GitStore(sys.argv[1]), sys.argv[2]
    for i in range(12):
        store.edit_note("HEAD", lambda old: json.dumps((json.loads(old) if old else []) + [f"{who}{i}"]))
    """
)


def test_concurrent_note_edits_of_two_workspaces_lose_nothing(mono):
    procs = [
        subprocess.Popen([sys.executable, "-c", EDITOR, str(mono.root / folder), folder[-3:]])
        for folder in (WS, "teams/sea")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    entries = json.loads(GitStore(mono.root).read_note("HEAD"))
    assert sorted(entries) == sorted([f"{who}{i}" for who in ("r x", "sea") for i in range(12)])
