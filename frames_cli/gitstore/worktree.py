"""The commits frames makes on the user's checked-out branch:
`frames coldstart`'s and `frames adopt`'s skills, and only them.

Everything else in frames commits through plumbing (`store.py`) without touching the checkout;
coldstart and adopt are different because their output is meant to land in the working tree the
user sees. A `CheckoutChange` makes their files and their commit one unit:

- before writing, `committable.check_committable` refuses a repository git would refuse to commit in for
  reasons frames can see (not a work tree, a merge or rebase in progress, `index.lock` held, the
  skills folder outside a sparse checkout), so nothing is written;
- every file's old bytes are journaled before it changes (gitstore/pending.py);
- the commit is built in a temporary index (`GIT_INDEX_FILE`) from HEAD plus exactly the touched
  paths, handed to `git commit` (so the user's hooks and signing apply) with the message on stdin
  and the paths on stdin (no argument-list limit, whatever the number of files); the user's
  other staged or unstaged changes stay exactly as they were, and the user's index gets the
  committed entries only after git made the commit;
- when git refuses (a hook, signing without a key, a lock), every file is put back as it was and
  the error says what git refused and what to do; when the run is killed, the next coldstart or
  adopt finishes the commit or puts the files back first (`finish_pending`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from frames_cli.errors import GitError
from frames_cli.gitstore.committable import LITERAL, check_committable, open_worktree
from frames_cli.gitstore.identity import FRAMES_IDENTITY, Identity
from frames_cli.gitstore.names import check_path
from frames_cli.gitstore.pending import Journal
from frames_cli.gitstore.repo import GitRepo

@dataclass(frozen=True)
class Finished:
    """What `finish_pending` did with a change an earlier run left: `action` is "committed" (the
    commit is made now, `sha`), "found-committed" (git had made it, `sha`; the index is updated),
    "nothing-to-commit" (the files already match HEAD) or "undone" (`files` put back)."""

    command: str
    action: str
    sha: str | None = None
    files: int = 0

    def __str__(self) -> str:
        what = f"an earlier `frames {self.command}` was stopped before its commit"
        if self.action == "undone":
            return f"{what} had written only part of its files; {self.files} file(s) put back as they were"
        if self.action == "nothing-to-commit":
            return f"{what}; its files are already committed"
        if self.action == "found-committed":
            return f"{what} had finished; commit {self.sha[:12] if self.sha else '?'} kept, git's index updated"
        return f"{what}; its commit is made now: {self.sha[:12] if self.sha else '?'}"

    def to_json(self) -> dict:
        """{"command", "action", "sha", "files"}."""
        return {"command": self.command, "action": self.action, "sha": self.sha, "files": self.files}


class CheckoutChange:
    """Files of the checkout changed by one frames command, ending in one commit or not at all.

    Use: `change = CheckoutChange.begin(root, state_dir, "coldstart")`; then, in `with
    change.writing():`, `change.touch(paths)` before writing or removing each batch of files; then
    `change.commit(message)`. Paths are workspace-relative POSIX paths.
    """

    def __init__(self, root: Path, repo: GitRepo, journal: Journal):
        self.root = Path(root).resolve()
        self._repo = repo
        self.journal = journal

    @classmethod
    def begin(cls, root: Path, state_dir: Path, command: str, folder: str = "skills") -> CheckoutChange:
        """Check the repository (`check_committable`) and start the journal.

        Raises:
            GitError: see `check_committable`; or an earlier change is still pending (call
                `finish_pending` first).
        """
        check_committable(root, folder)
        if Journal.read(state_dir) is not None:
            raise GitError(
                f"an earlier change to the checkout is still pending in {Path(state_dir) / 'pending-commit'}; run "
                "frames coldstart or adopt to finish it"
            )
        repo = open_worktree(root)
        return cls(root, repo, Journal.start(state_dir, command, _head(repo)))

    @contextmanager
    def writing(self) -> Iterator[CheckoutChange]:
        """The block that writes the files: any error or interrupt inside puts every touched file
        back and ends the change before it propagates (a full disk, Ctrl-C, an unsafe path)."""
        try:
            yield self
        except BaseException:
            self.undo()
            raise

    def touch(self, paths: list[str]) -> None:
        """Record what `paths` hold now; call before writing, moving or removing them."""
        self.journal.touch(self.root, [check_path(p) for p in paths])

    def commit(self, message: str, *, author: Identity | None = None) -> str | None:
        """Commit every touched path as it is now on disk, on the current branch.

        Args:
            message: the whole commit message (given to git on stdin).
            author: the commit's author; None = the user's git identity when one is configured
                (user.name and user.email), else frames' own. The committer is the user's
                identity when configured, else the author (so a fresh CI machine without
                `user.name` can still commit).

        Returns:
            The new commit's sha, or None when no touched path differs from HEAD (nothing is committed).

        Raises:
            GitError: git refused the commit, or the user's index could not take its entries (the
                branch is then moved back); every touched file is put back as it was first, and
                the message quotes git and says what to do.
        """
        self.journal.mark_written(message, author)
        try:
            sha = _commit(self._repo, [t.path for t in self.journal.touched], message, author)
        except GitError as exc:
            undone = self.undo()
            raise GitError(_refusal(str(exc), self.journal.command, undone)) from None
        try:
            return self._finish(sha)
        except GitError as exc:
            # The index could not take the commit's entries (a lock a hook or another command
            # holds): the branch goes back to where it was, as if git had refused the commit.
            if sha is None or not _unwind(self._repo, sha):
                raise
            undone = self.undo()
            raise GitError(
                _refusal(f"{exc}; frames moved the branch back to where it was", self.journal.command, undone)
            ) from None

    def undo(self) -> int:
        """Put every touched file back and end the change; returns the files put back."""
        undone = self.journal.restore(self.root)
        self.journal.remove()
        return undone

    def _finish(self, sha: str | None) -> str | None:
        if sha is not None:
            self.journal.mark_committed(sha)
        # With nothing to commit the files hold HEAD's text: their index entries become HEAD's too,
        # as `git add` would make them (a `git rm` of them is no longer staged).
        head = sha or _head(self._repo)
        if head is not None:
            _update_index(self._repo, [t.path for t in self.journal.touched], head)
        self.journal.remove()
        return sha


def finish_pending(root: Path, state_dir: Path) -> Finished | None:
    """Finish or undo the change an earlier coldstart or adopt left when it was killed (see gitstore/pending.py).

    A change whose files were all written is committed now with its message (or, when git had
    already made that commit, only git's index is brought up to it); a change stopped while
    writing has its files put back. Call it under the workspace lock, before reading skills.

    Returns:
        What was done, or None when nothing was pending.

    Raises:
        GitError: git refuses the commit now (the files are put back and the message says why),
            or the repository cannot be committed in (`check_committable`; the journal stays).
    """
    journal = Journal.read(state_dir)
    if journal is None:
        return None
    change = CheckoutChange(root, open_worktree(root), journal)
    if not journal.written:
        return Finished(journal.command, "undone", files=change.undo())
    paths = [t.path for t in journal.touched]
    made = journal.committed or _made_by_git(change._repo, journal)
    if made:
        _update_index(change._repo, paths, made)
        journal.remove()
        return Finished(journal.command, "found-committed", made)
    check_committable(root)
    try:
        sha = _commit(change._repo, paths, journal.message, journal.author)
    except GitError as exc:
        undone = change.undo()
        raise GitError(_refusal(str(exc), journal.command, undone)) from None
    change._finish(sha)
    return Finished(journal.command, "committed" if sha else "nothing-to-commit", sha)


def _unwind(repo: GitRepo, sha: str) -> bool:
    """Move HEAD's branch from the commit `sha` frames just made back to its parent (only if the
    branch still points at `sha`: git checks the old value); True when done."""
    parent = repo._run("rev-list", "--parents", "-n", "1", sha).split()[1:2]
    try:
        if parent:
            repo._run("update-ref", "-m", "frames: the index could not take the commit", "HEAD", parent[0], sha)
        else:
            repo._run("update-ref", "-d", "HEAD", sha)
    except GitError:
        return False
    return True


def _head(repo: GitRepo) -> str | None:
    try:
        return repo._run("rev-parse", "--verify", "--quiet", "HEAD^{commit}") or None
    except GitError:
        return None


def _made_by_git(repo: GitRepo, journal: Journal) -> str | None:
    """The commit a killed run's git process went on to make: HEAD, a child of the journal's HEAD
    carrying its message. None when git did not make it."""
    head = _head(repo)
    if head is None or head == journal.head:
        return None
    try:
        parents = repo._run("rev-list", "--parents", "-n", "1", head).split()[1:]
        message = repo._run("log", "-1", "--format=%B", head)
    except GitError:
        return None
    same_parent = parents[:1] == ([journal.head] if journal.head else [])
    return head if same_parent and message.strip() == journal.message.strip() else None


def _identity_env(repo: GitRepo, author: Identity | None) -> dict[str, str]:
    """Author and committer for `git commit`: the user's configured identity, else `author` or frames'."""
    configured = all(repo._run("config", "--default", "", key) for key in ("user.name", "user.email"))
    fallback = author or FRAMES_IDENTITY
    env = (
        {} if author is None and configured else {"GIT_AUTHOR_NAME": fallback.name, "GIT_AUTHOR_EMAIL": fallback.email}
    )
    if not configured:
        env.update(GIT_COMMITTER_NAME=fallback.name, GIT_COMMITTER_EMAIL=fallback.email)
    return env


def _stdin(folder: Path, name: str, data: bytes):  # type: ignore[no-untyped-def]
    path = folder / name
    path.write_bytes(data)
    return open(path, "rb")


def _commit(repo: GitRepo, paths: list[str], message: str, author: Identity | None) -> str | None:
    """`git commit` of HEAD's tree with `paths` as they are on disk, through a temporary index.

    Returns the new sha, or None when the paths hold what HEAD holds. Raises GitError (git's message).
    """
    specs = [repo.repo_path(p) for p in paths]
    head = _head(repo)
    with tempfile.TemporaryDirectory(prefix="frames-commit-") as tmp:
        folder = Path(tmp)
        env = {"GIT_INDEX_FILE": str(folder / "index"), **LITERAL}
        repo._run("read-tree", *([head] if head else ["--empty"]), env=env)
        # A path git ignores and does not track stays out, as `git add` would leave it.
        tops = sorted({repo.repo_path(p.split("/", 1)[0]) for p in paths})
        ignored = set(
            repo._run("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", *tops, env=env).split("\0")
        )
        specs = [s for s in specs if s not in ignored]
        if not specs:
            return None
        with _stdin(folder, "specs", b"".join(s.encode() + b"\0" for s in specs)) as fh:
            repo._run("update-index", "--add", "--remove", "-z", "--stdin", env=env, stdin=fh)
        if head and repo._run("diff-index", "--cached", "--name-only", "-z", head, env=env) == "":
            return None
        if not head and repo._run("ls-files", "-z", env=env) == "":
            return None
        with _stdin(folder, "message", message.encode("utf-8")) as fh:
            try:
                repo._run("commit", "--quiet", "--file=-", env={**env, **_identity_env(repo, author)}, stdin=fh)
            except GitError as exc:
                hooks = _commit_hooks(repo)
                raise GitError(f"{exc} (the repository's {', '.join(hooks)} hook ran)" if hooks else str(exc)) from None
        return _head(repo)


def _commit_hooks(repo: GitRepo) -> list[str]:
    """The commit hooks git runs in this repository (executable files in its hooks folder)."""
    import os

    folder = repo.root / repo._run("rev-parse", "--git-path", "hooks")
    return [
        h for h in ("pre-commit", "prepare-commit-msg", "commit-msg")
        if os.access(folder / h, os.X_OK) and (folder / h).is_file()
    ]


def _update_index(repo: GitRepo, paths: list[str], sha: str) -> None:
    """Give the user's index the entries commit `sha` has for `paths` (removed where it has none),
    as `git commit --only` would, so `git status` shows them committed.

    Raises:
        GitError: the index could not be written; the commit stands, and the message says how to
            bring the index up to it.
    """
    specs = {repo.repo_path(p) for p in paths}
    with tempfile.TemporaryDirectory(prefix="frames-index-") as tmp:
        folder = Path(tmp)
        env = {"GIT_INDEX_FILE": str(folder / "index")}
        repo._run("read-tree", sha, env=env)
        entries = {}
        for line in repo._run("ls-files", "-s", "-z", env=env).split("\0"):
            if line:
                info, path = line.split("\t", 1)
                if path in specs:
                    mode, blob, _stage = info.split()
                    entries[path] = f"{mode} {blob}\t{path}"
        gone = sorted(specs - set(entries))
        try:
            if entries:
                with _stdin(folder, "info", "".join(e + "\0" for e in entries.values()).encode()) as fh:
                    repo._run("update-index", "-z", "--index-info", stdin=fh)
            if gone:
                with _stdin(folder, "gone", "".join(p + "\0" for p in gone).encode()) as fh:
                    repo._run("update-index", "--force-remove", "-z", "--stdin", stdin=fh)
        except GitError as exc:
            top = repo.repo_path("skills") or "."
            raise GitError(
                f"committed {sha[:12]}, but git's index could not be updated ({exc}); "
                f"run `git reset -q -- {top}` so that `git status` shows the skills as committed"
            ) from None


def _refusal(detail: str, command: str, undone: int) -> str:
    """The account of a refused commit: what git said, what frames did, what the user must do."""
    low = detail.lower()
    if "gpg" in low or "sign" in low:
        fix = (
            "set up the signing key git is configured to use, or turn signing off for this repository "
            "(`git config commit.gpgsign false`)"
        )
    elif ".lock" in low:
        fix = "another git command holds the lock named above; if none is running, delete that lock file"
    elif "hook" in low or "pre-commit" in low or "commit-msg" in low:
        fix = "fix what the git hook reports (or change the hook)"
    elif "tell me who you are" in low or "identity" in low:
        fix = "set your git identity (`git config user.name`, `git config user.email`)"
    else:
        fix = "fix what git reports"
    return (
        f"git refused the commit: {detail}. frames put back the {undone} file(s) it had written, so nothing is "
        f"changed or staged; {fix}, then run `frames {command}` again"
    )
