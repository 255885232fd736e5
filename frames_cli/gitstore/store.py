"""GitStore: git plumbing for frames (read trees, commit trees, refs, notes, branches), never the checkout.

Every write goes through object-level plumbing (`hash-object`, a temporary index named by
`GIT_INDEX_FILE`, `write-tree`, `commit-tree`, `update-ref`), so the user's index file, working
tree and checked-out branch stay exactly as they were. Text that came from users (run ids, branch
names, candidate names) is validated with `git check-ref-format` before it becomes part of a ref,
and revisions are passed after `--end-of-options`, so no user text is ever read as a git option.

A workspace may live in a subfolder of its repository (a monorepo: `teams/air/frames.yaml`). Every
path a GitStore method takes or returns is relative to the workspace folder ("skills/x/SKILL.md");
`repo_path` and `workspace_path` are the one place that maps them to and from the repository's
paths, so reads, commits and diffs see only the workspace's folder and never change another's.
Refs, branches and notes belong to the repository, not to a workspace (see docs/decisions/0022-monorepo-workspace.md).

GitStore is one object made of parts, each in its module: GitRepo (gitstore/repo.py: the repository,
the path mapping, running git, resolving revisions), GitHistory (history.py: log, trailers, diffs),
GitNotes (notes.py), GitRemote (remote.py: pushing the review branch and notes); this module adds reading trees,
commits, refs and branches. Identities and dates are gitstore/identity.py, messages message.py, name checks names.py.
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path

from git.exc import GitCommandError
from git.objects import Blob, Tree

from frames_cli.errors import GitError, InputError
from frames_cli.gitstore.history import GitHistory
from frames_cli.gitstore.identity import FRAMES_IDENTITY, Identity, git_date, identity_env
from frames_cli.gitstore.names import check_path, check_ref_name
from frames_cli.gitstore.process import SessionRepo
from frames_cli.gitstore.remote import GitRemote
from frames_cli.gitstore.repo import FILE_MODES, SKILLS_PREFIX

_ZERO_SHA = "0" * 40


class GitStore(GitHistory, GitRemote):
    """Plumbing access to the git repository containing `root` (the workspace folder), seen from `root`.

    Paths in arguments and results are relative to `root` (see the module docstring). Never
    touches the user's index, working tree or checked-out branch. Methods raise `GitError` (exit
    code 1) when git refuses and `InputError` (exit code 2) for an unsafe ref or path name;
    user text is never passed to git as an option.
    """

    def read_files(self, ref: str, prefix: str = SKILLS_PREFIX) -> dict[str, bytes]:
        """The regular files under `prefix` in the tree of commit `ref`, without checking anything out.

        Args:
            ref: any revision `resolve` accepts.
            prefix: a folder path relative to the workspace ("skills/"); "" reads the workspace's
                whole folder (the whole tree at the top level).

        Returns:
            {workspace-relative POSIX path ("skills/x/SKILL.md"): file bytes}, sorted by path;
            empty when the folder does not exist at `ref`. Symlinks and submodules are skipped.

        Raises:
            GitError: `ref` names no commit.
        """
        sha = self.resolve(ref)
        folder = self.repo_path(prefix.strip("/"))
        with SessionRepo(self.root) as repo:
            tree = repo.commit(sha).tree
            if folder:
                try:
                    tree = tree / folder
                except KeyError:
                    return {}
                if not isinstance(tree, Tree):
                    return {}
            blobs = {
                os.fspath(item.path): item
                for item in tree.traverse()
                if isinstance(item, Blob) and f"{item.mode:o}" in FILE_MODES
            }
            files: dict[str, bytes] = {}
            for repo_path in sorted(blobs):
                path = self.workspace_path(repo_path)
                if path is not None:  # always: every blob lies under `folder`, itself inside the workspace
                    files[path] = blobs[repo_path].data_stream.read()
            return files

    def commit_files(
        self,
        parent: str,
        changes: dict[str, bytes | None],
        message: str,
        ref: str | None = None,
        *,
        author: Identity = FRAMES_IDENTITY,
        committer: Identity | None = None,
        date: datetime | None = None,
        under: str | None = None,
    ) -> str:
        """Commit `parent`'s tree with `changes` applied, without touching the index or working tree.

        The tree is built in a temporary index (`GIT_INDEX_FILE` in a temporary folder), so the
        user's `.git/index`, files and branch are untouched; the commit is reachable only from `ref`.
        Empty `changes` give a commit with the parent's tree. Only files inside the workspace's
        folder can change: the rest of the parent's tree (other workspaces of a monorepo) is kept
        byte for byte.

        Args:
            parent: the parent revision.
            changes: {workspace-relative POSIX path: new bytes, or None to delete the file}. A
                changed file keeps its mode (an executable script stays executable); new files get 100644.
            message: the full commit message (see `commit_message`); must not be blank.
            ref: a full ref name ("refs/frames/runs/<run>/r1c1") to point at the commit; see `set_ref`.
            author: the author; the committer too unless `committer` is given.
            date: author and committer date (timezone-aware, or UTC if naive); None = now. Fixing it
                makes the commit sha reproducible for the same parent, changes and message.
            under: when given ("skills/", workspace-relative), every changed path must lie below this
                folder; the last guard that a rewrite cannot touch files outside the skills.

        Returns:
            The new commit's 40-hex sha.

        Raises:
            InputError: a path is absolute, empty, has `.`/`..`/`.git` parts or lies outside `under`,
                or `ref` is unsafe.
            GitError: `parent` names no commit, a file and a folder would share a path, or git refuses.
        """
        if not message.strip():
            raise GitError("refusing to commit with an empty message")
        parent_sha = self.resolve(parent)
        for path in changes:
            check_path(path)
            if under is not None and not path.startswith(under.rstrip("/") + "/"):
                raise InputError(f"refusing to commit {path!r}: outside {under}")
        changes = {self.repo_path(path): data for path, data in changes.items()}
        if ref is not None:
            self._check_settable(ref)
        committer = committer or author
        with tempfile.TemporaryDirectory(prefix="frames-commit-") as tmp:
            folder = Path(tmp)
            index_env = {"GIT_INDEX_FILE": str(folder / "index")}
            self._run("read-tree", parent_sha, env=index_env)
            before = self._index_paths(index_env)
            (folder / "entries").write_bytes(self._index_entries(parent_sha, changes, folder))
            with open(folder / "entries", "rb") as stdin:
                self._run("update-index", "-z", "--index-info", env=index_env, stdin=stdin)
            # --index-info silently drops a folder replaced by a file (and the reverse): refuse instead.
            expected = {p for p in before if changes.get(p, b"") is not None} | {
                p for p, d in changes.items() if d is not None
            }
            lost = sorted(expected ^ self._index_paths(index_env))
            if lost:
                shown = (self.workspace_path(p) or p for p in lost[:5])
                raise GitError(f"a file and a folder would share a path in the commit: {', '.join(shown)}")
            tree = self._run("write-tree", env=index_env)
            (folder / "message").write_text(message if message.endswith("\n") else message + "\n", encoding="utf-8")
            commit_env = identity_env(author, committer)
            if date is not None:
                stamp = git_date(date)
                commit_env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
            # --no-gpg-sign: a user's commit.gpgSign would make cron wait for a passphrase.
            sha = self._run(
                "commit-tree", "--no-gpg-sign", "-p", parent_sha, "-F", str(folder / "message"), tree, env=commit_env
            )
        if ref is not None:
            self.set_ref(ref, sha)
        return sha

    def _index_entries(self, parent_sha: str, changes: dict[str, bytes | None], folder: Path) -> bytes:
        """`update-index -z --index-info` input for `changes`: blobs written, modes kept from `parent_sha`."""
        written = sorted(path for path, data in changes.items() if data is not None)
        shas: list[str] = []
        if written:
            files = []
            for i, path in enumerate(written):
                files.append(folder / f"blob{i}")
                files[-1].write_bytes(changes[path])  # type: ignore[arg-type]
            # --no-filters: store the bytes as given, whatever the user's autocrlf or attributes say.
            shas = self._run("hash-object", "-w", "--no-filters", "--", *map(str, files)).split("\n")
        modes = self._modes(parent_sha, written)
        records = [f"{modes.get(path, '100644')} {sha}\t{path}" for path, sha in zip(written, shas)]
        records += [f"0 {_ZERO_SHA}\t{path}" for path, data in sorted(changes.items()) if data is None]
        return b"".join(record.encode("utf-8") + b"\0" for record in records)

    def _index_paths(self, env: dict[str, str]) -> set[str]:
        """The paths in the index that `env`'s GIT_INDEX_FILE names."""
        return set(filter(None, self._run("ls-files", "-z", "--full-name", env=env).split("\0")))

    def _modes(self, sha: str, paths: list[str]) -> dict[str, str]:
        """{path: mode} of the regular files among `paths` in commit `sha`."""
        if not paths:
            return {}
        # Literal pathspecs: a path such as ":(glob)*" is a file name here, never a pattern.
        listing = self._run("ls-tree", "-z", "--full-tree", sha, "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"})
        modes = {}
        for entry in filter(None, listing.split("\0")):
            meta, path = entry.split("\t", 1)
            mode = meta.split(" ", 1)[0]
            if mode in FILE_MODES:
                modes[path] = mode
        return modes

    def current_branch(self) -> str | None:
        """The full ref of the checked-out branch ("refs/heads/main"), or None on a detached HEAD."""
        try:
            return self._git.symbolic_ref("--quiet", "HEAD")
        except GitCommandError:
            return None

    def user_identity(self) -> Identity | None:
        """The identity git would record for the user here (`git var GIT_COMMITTER_IDENT`: git config
        user.name / user.email, the GIT_COMMITTER_* variables, or git's own guess when it allows
        one); None when git knows no identity."""
        try:
            ident = self._git.var("GIT_COMMITTER_IDENT")
        except GitCommandError:
            return None
        # "Name <email> <seconds> <zone>"
        name, _, rest = ident.partition(" <")
        return Identity(name, rest.rpartition(">")[0])

    def _check_settable(self, ref: str) -> None:
        """Raise unless `ref` is a safe full ref outside `refs/heads/` (branches go through create_branch)."""
        check_ref_name(ref)
        if not ref.startswith("refs/"):
            raise InputError(f"not a full ref name (must start with refs/): {ref!r}")
        if ref.startswith("refs/heads/"):
            raise GitError(f"set_ref does not move branches; use create_branch: {ref}")

    def set_ref(self, ref: str, sha: str) -> None:
        """Point the full ref `ref` (for example "refs/frames/runs/<run>/r1c1") at commit `sha`.

        Raises:
            InputError: `ref` is unsafe or not under refs/.
            GitError: `ref` is a branch (`refs/heads/...`: use create_branch) or `sha` is no commit.
        """
        self._check_settable(ref)
        self._run("update-ref", "-m", "frames", ref, self.resolve(sha))

    def delete_ref(self, ref: str) -> None:
        """Delete the full ref `ref` (not a branch); nothing happens when it does not exist.

        Raises:
            InputError / GitError: as `set_ref`.
        """
        self._check_settable(ref)
        if ref in self.list_refs(ref):
            self._run("update-ref", "-d", ref)

    def list_refs(self, prefix: str = "refs/frames/") -> dict[str, str]:
        """{full ref name: commit sha} of the refs at or under `prefix`, sorted by name.

        Raises:
            InputError: `prefix` does not start with "refs/" or is unsafe.
        """
        if not prefix.startswith("refs/"):
            raise InputError(f"ref prefix must start with refs/: {prefix!r}")
        if prefix.rstrip("/") != "refs":
            check_ref_name(prefix.rstrip("/"))
        listing = self._run("for-each-ref", "--format=%(objectname) %(refname)", prefix.rstrip("/"))
        refs = dict(line.split(" ", 1)[::-1] for line in listing.splitlines() if line)
        return dict(sorted(refs.items()))

    def delete_branch(self, name: str, sha: str) -> bool:
        """Delete branch `name` if it still points at commit `sha`; returns whether it was deleted.

        A branch someone moved since (it no longer points at `sha`), and the checked-out branch, are
        left as they are.

        Raises:
            InputError: `name` is not a safe branch name.
        """
        ref = f"refs/heads/{name}"
        if name.startswith("-") or name == "HEAD":
            raise InputError(f"unsafe branch name {name!r}")
        check_ref_name(ref)
        target = self.resolve(sha)
        if self.list_refs(ref).get(ref) != target or ref == self.current_branch():
            return False
        self._run("update-ref", "-d", ref, target)
        return True

    def create_branch(self, name: str, sha: str, *, force: bool = False) -> str:
        """Create branch `name` at commit `sha`; returns its full ref ("refs/heads/<name>").

        An existing branch already at `sha` is left as it is. The checked-out branch is never moved.

        Args:
            name: the short branch name ("frames/20261129-101500-a1b2c3"), user text allowed.
            sha: any revision naming a commit.
            force: move an existing branch that points elsewhere (never the checked-out one).

        Raises:
            InputError: `name` is not a safe branch name.
            GitError: the branch exists at another commit and `force` is False, or it is checked out.
        """
        ref = f"refs/heads/{name}"
        if name.startswith("-") or name == "HEAD":
            raise InputError(f"unsafe branch name {name!r}")
        check_ref_name(ref)
        target = self.resolve(sha)
        existing = self.list_refs(ref).get(ref)
        if existing == target:
            return ref
        if existing is not None:
            if ref == self.current_branch():
                raise GitError(f"branch {name} is checked out; frames never moves the current branch")
            if not force:
                raise GitError(
                    f"branch {name} already exists at {existing[:12]}, not at {target[:12]}; choose another name"
                )
            self._run("update-ref", "-m", "frames promote", ref, target, existing)
        else:
            # The all-zero old value makes git refuse if someone created the branch meanwhile.
            self._run("update-ref", "-m", "frames promote", ref, target, _ZERO_SHA)
        return ref
