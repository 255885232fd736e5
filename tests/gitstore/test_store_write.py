"""GitStore writes (commits, refs, branches, notes) on real temporary repositories.

Invariants:
1. commit_files leaves `git status --porcelain`, HEAD, the index file bytes and the working tree unchanged.
2. The new commit has exactly the parent's tree with the changes applied, modes kept, and frames' identity.
3. A note round-trips byte for byte and can be replaced.
4. No branch is ever moved by set_ref, and create_branch never moves the checked-out branch.
5. Unsafe ref names and paths are rejected before anything is written.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime, timedelta, timezone

import pytest

from frames_cli.errors import GitError, InputError
from frames_cli.gitstore.identity import Identity
from frames_cli.gitstore.message import commit_message
from frames_cli.gitstore.names import check_path, check_ref_name
from frames_cli.gitstore.store import GitStore


def _snapshot(repo) -> dict:
    """Everything a user would notice: status, HEAD, branch, index bytes and every working-tree file."""
    files = {}
    for path in sorted(repo.root.rglob("*")):
        if ".git" not in path.relative_to(repo.root).parts and path.is_file():
            files[path.relative_to(repo.root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return {
        # --no-optional-locks: a plain `git status` may itself rewrite the index to refresh stat data.
        "status": repo.git("--no-optional-locks", "status", "--porcelain", "--untracked-files=all"),
        "head": repo.git("rev-parse", "HEAD"),
        "branch": repo.git("symbolic-ref", "HEAD"),
        "index": hashlib.sha256((repo.root / ".git" / "index").read_bytes()).hexdigest(),
        "files": files,
    }


@pytest.fixture
def dirty_repo(git_repo):
    """The fixture repository with a staged change, an unstaged change and an untracked file."""
    git_repo.write("skills/alpha/SKILL.md", "---\nname: alpha\n---\nStaged edit.\n")
    git_repo.git("add", "skills/alpha/SKILL.md")
    git_repo.write("skills/beta/SKILL.md", "---\nname: beta\n---\nUnstaged edit.\n")
    git_repo.write("notes.txt", "untracked\n")
    return git_repo


def test_commit_files_touches_nothing_the_user_sees(dirty_repo):
    before = _snapshot(dirty_repo)
    environ = dict(os.environ)
    store = GitStore(dirty_repo.root)
    sha = store.commit_files(
        "HEAD",
        {"skills/alpha/SKILL.md": b"---\nname: alpha\n---\nRewritten.\n", "skills/gamma/SKILL.md": b"new\n"},
        "Rewrite alpha",
        ref="refs/frames/runs/r/r1c1",
    )
    assert _snapshot(dirty_repo) == before
    assert dict(os.environ) == environ
    assert store.list_refs("refs/frames/") == {"refs/frames/runs/r/r1c1": sha}


def test_commit_files_applies_changes_to_parent_tree(git_repo):
    store = GitStore(git_repo.root)
    head = store.resolve("HEAD")
    sha = store.commit_files(
        "HEAD",
        {
            "skills/alpha/SKILL.md": None,
            "skills/beta/scripts/run.sh": b"#!/bin/sh\necho changed\n",
            "skills/gamma/SKILL.md": b"gamma\r\nwith CRLF kept\r\n",
        },
        "Change three files",
    )
    assert git_repo.git("rev-parse", f"{sha}^") == head
    assert store.read_files(sha) == {
        "skills/beta/SKILL.md": b"---\nname: beta\n---\nBeta body.\n",
        "skills/beta/scripts/run.sh": b"#!/bin/sh\necho changed\n",
        "skills/gamma/SKILL.md": b"gamma\r\nwith CRLF kept\r\n",
    }
    assert store.read_files(sha, "") ["README.md"] == b"readme\n"
    modes = git_repo.git("ls-tree", "-r", "--format=%(objectmode) %(path)", sha).splitlines()
    assert "100755 skills/beta/scripts/run.sh" in modes
    assert "100644 skills/gamma/SKILL.md" in modes
    assert (
        git_repo.git("log", "-1", "--format=%an <%ae>|%cn <%ce>", sha)
        == "frames <frames@localhost>|frames <frames@localhost>"
    )


def test_commit_identity_and_date_per_call_make_shas_reproducible(git_repo):
    store = GitStore(git_repo.root)
    when = datetime(2026, 11, 29, 10, 15, tzinfo=timezone(timedelta(hours=2)))
    kwargs = {"author": Identity("Rev Iewer", "rev@example.com"), "date": when}
    first = store.commit_files("HEAD", {"skills/alpha/SKILL.md": b"x\n"}, "same", **kwargs)
    second = store.commit_files("HEAD", {"skills/alpha/SKILL.md": b"x\n"}, "same", **kwargs)
    assert first == second
    assert (
        git_repo.git("log", "-1", "--format=%an|%ad", "--date=raw", first) == f"Rev Iewer|{int(when.timestamp())} +0200"
    )


@pytest.mark.parametrize("path", ["", "/etc/passwd", "skills/../x", "skills/./a", ".git/config", "skills/.GIT/x",
                                  "a\\b", "a//b", "skills/a/"])
def test_commit_files_rejects_unsafe_paths_before_writing(git_repo, path):
    store = GitStore(git_repo.root)
    with pytest.raises(InputError):
        store.commit_files("HEAD", {path: b"x"}, "bad", ref="refs/frames/bad")
    assert store.list_refs("refs/frames/") == {}
    with pytest.raises(InputError):
        check_path(path)


def test_commit_files_takes_odd_names_literally(git_repo):
    store = GitStore(git_repo.root)
    odd = {"skills/:(glob)*/SKILL.md": b"glob\n", "skills/-n/SKILL.md": b"dash\n", "skills/ü ñ/SKILL.md": b"utf8\n"}
    sha = store.commit_files("HEAD", {**odd, "skills/beta/scripts/run.sh": b"x\n"}, "odd names")
    files = store.read_files(sha)
    assert {path: files[path] for path in odd} == odd
    assert "100755 skills/beta/scripts/run.sh" in git_repo.git("ls-tree", "-r", "--format=%(objectmode) %(path)", sha)
    assert store.diff_stat("HEAD", sha).files[-1].path == "skills/ü ñ/SKILL.md"


def test_commit_files_under_a_folder_only(git_repo):
    store = GitStore(git_repo.root)
    for path in ["README.md", "skillsX/a", "skills"]:
        with pytest.raises(InputError, match="outside skills/"):
            store.commit_files("HEAD", {path: b"x"}, "msg", under="skills/")
    sha = store.commit_files("HEAD", {"skills/alpha/SKILL.md": b"x"}, "msg", under="skills")
    assert store.read_files(sha)["skills/alpha/SKILL.md"] == b"x"


def test_commit_files_errors(git_repo):
    store = GitStore(git_repo.root)
    with pytest.raises(GitError, match="empty message"):
        store.commit_files("HEAD", {"skills/a/SKILL.md": b"x"}, "  \n")
    with pytest.raises(GitError):
        store.commit_files("no-such-parent", {"skills/a/SKILL.md": b"x"}, "msg")
    # git's --index-info would silently drop skills/beta/* here; frames refuses instead.
    for conflict in ({"skills/beta": b"x"}, {"README.md/x": b"x"}, {"skills/new": b"x", "skills/new/SKILL.md": b"y"}):
        with pytest.raises(GitError, match="share a path"):
            store.commit_files("HEAD", conflict, "msg")


def test_notes_round_trip_byte_for_byte(git_repo):
    store = GitStore(git_repo.root)
    before = _snapshot(git_repo)
    head = store.resolve("HEAD")
    assert store.read_note(head) is None
    text = '{\n  "pass_rate": 0.75\n}\n\n# not a comment   \n\n'
    store.add_note(head, text)
    assert store.read_note("HEAD") == text
    store.add_note(head, "replaced")
    assert store.read_note(head) == "replaced"
    assert git_repo.git("notes", "--ref", "refs/notes/frames", "show", head) == "replaced"
    assert _snapshot(git_repo) == before
    with pytest.raises(GitError):
        store.add_note("no-such-commit", "x")


def test_set_ref_and_list_refs(git_repo):
    store = GitStore(git_repo.root)
    head = store.resolve("HEAD")
    child = store.commit_files(head, {"skills/alpha/SKILL.md": b"c\n"}, "child")
    store.set_ref("refs/frames/runs/run1/r1c1", child)
    store.set_ref("refs/frames/runs/run1/base", head)
    store.set_ref("refs/frames/runs/run2/r1c1", head)
    assert store.list_refs("refs/frames/runs/run1/") == {
        "refs/frames/runs/run1/base": head,
        "refs/frames/runs/run1/r1c1": child,
    }
    assert set(store.list_refs()) == {f"refs/frames/runs/run{n}/{c}"
                                      for n, c in [(1, "base"), (1, "r1c1"), (2, "r1c1")]}
    store.delete_ref("refs/frames/runs/run2/r1c1")
    store.delete_ref("refs/frames/runs/run2/r1c1")
    assert "refs/frames/runs/run2/r1c1" not in store.list_refs()
    with pytest.raises(InputError):
        store.list_refs("heads")


@pytest.mark.parametrize("ref", ["refs/heads/main", "refs/heads/other"])
def test_set_ref_never_moves_branches(git_repo, ref):
    store = GitStore(git_repo.root)
    child = store.commit_files("HEAD", {"skills/alpha/SKILL.md": b"c\n"}, "child")
    with pytest.raises(GitError, match="create_branch"):
        store.set_ref(ref, child)
    assert store.resolve("main") != child


@pytest.mark.parametrize(
    "ref", ["frames/x", "refs/frames/a..b", "refs/frames/a b", "refs/frames/x.lock", "refs/frames/a~1", "-refs/x",
            "refs/frames/@{u}", "refs/frames/x:y", "refs/frames/"]
)
def test_unsafe_refs_rejected(git_repo, ref):
    store = GitStore(git_repo.root)
    with pytest.raises(InputError):
        store.set_ref(ref, "HEAD")
    assert store.list_refs("refs/") == {"refs/heads/main": store.resolve("HEAD")}


@pytest.mark.parametrize("name", ["-f", "--force", "HEAD", "a..b", "x y", "x.lock", "../main", "a:b", "x~1", "x^",
                                  "end/", "@{-1}", "a\\b"])
def test_create_branch_rejects_unsafe_names(git_repo, name):
    store = GitStore(git_repo.root)
    with pytest.raises(InputError):
        store.create_branch(name, "HEAD")
    assert git_repo.git("branch", "--format=%(refname)") == "refs/heads/main"


def test_create_branch_rules(git_repo):
    store = GitStore(git_repo.root)
    before = _snapshot(git_repo)
    head = store.resolve("HEAD")
    child = store.commit_files(head, {"skills/alpha/SKILL.md": b"c\n"}, "child")
    other = store.commit_files(head, {"skills/alpha/SKILL.md": b"o\n"}, "other")
    assert store.create_branch("frames/run1", child) == "refs/heads/frames/run1"
    assert store.create_branch("frames/run1", child) == "refs/heads/frames/run1"
    with pytest.raises(GitError, match="already exists"):
        store.create_branch("frames/run1", other)
    assert store.resolve("frames/run1") == child
    store.create_branch("frames/run1", other, force=True)
    assert store.resolve("frames/run1") == other
    with pytest.raises(GitError, match="checked out"):
        store.create_branch("main", child, force=True)
    assert _snapshot(git_repo) == before


def test_diff_and_diff_stat(git_repo):
    store = GitStore(git_repo.root)
    child = store.commit_files(
        "HEAD",
        {"skills/alpha/SKILL.md": b"---\nname: alpha\n---\nAlpha body.\nNew rule.\n", "README.md": b"changed\n"},
        "child",
    )
    diff = store.diff("HEAD", child)
    assert "+New rule." in diff and "README" not in diff
    assert "diff --git a/skills/alpha/SKILL.md b/skills/alpha/SKILL.md" in diff
    stat = store.diff_stat("HEAD", child)
    assert [(f.path, f.added, f.deleted) for f in stat.files] == [("skills/alpha/SKILL.md", 1, 0)]
    assert stat.lines_changed == 1
    assert store.diff_stat("HEAD", child, paths=("",)).lines_changed == 3
    assert store.diff("HEAD", "HEAD") == ""


def test_commit_message_trailers_round_trip(git_repo):
    store = GitStore(git_repo.root)
    trailers = {"Frames-Run": "20261129-101500-a1b2c3", "Frames-Parent": "r0c0", "Frames-Models": "frames-sim/rewriter"}
    message = commit_message("Improve alpha", "alpha: add the rule.\n\nVotes: 2/3", trailers)
    sha = store.commit_files("HEAD", {"skills/alpha/SKILL.md": b"x\n"}, message)
    assert git_repo.git("log", "-1", "--format=%B", sha).startswith("Improve alpha\n\nalpha: add the rule.")
    assert store.trailers(sha) == trailers
    assert store.trailers("HEAD") == {}
    with pytest.raises(ValueError):
        commit_message("two\nlines")
    with pytest.raises(ValueError):
        commit_message("ok", trailers={"Bad Key": "v"})
    with pytest.raises(ValueError):
        commit_message("ok", trailers={"Key": "a\nb"})


def test_check_ref_name_accepts_frames_refs():
    assert (
        check_ref_name("refs/frames/runs/20261129-101500-a1b2c3/r2c1") == "refs/frames/runs/20261129-101500-a1b2c3/r2c1"
    )


def test_store_from_subfolder_uses_top_level(git_repo):
    store = GitStore(git_repo.root / "skills" / "beta")
    assert (store.root, store.prefix) == (git_repo.root.resolve(), "skills/beta/")
    assert GitStore(git_repo.root).prefix == ""
