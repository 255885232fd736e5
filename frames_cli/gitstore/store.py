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
Refs, branches and notes belong to the repository, not to a workspace (see docs/DECISIONS.md).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from git.exc import GitCommandError

from frames_cli.errors import GitError, InputError, UnknownRevisionError
from frames_cli.gitstore.process import SessionGit, SessionRepo
from frames_cli.sanitize import clean, one_line
from frames_cli.secretscan import REDACTED, redact_secrets

SKILLS_PREFIX = "skills/"
NOTES_REF = "refs/notes/frames"
# Regular files only: symlinks could point outside `skills/`, submodules are not skill text.
_FILE_MODES = {"100644", "100755"}
_ZERO_SHA = "0" * 40
_TRAILER_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*$")
# Paths in diff and log listings: taken literally (no pathspec magic) and printed unquoted (non-ASCII).
_LISTING_ENV = {"GIT_LITERAL_PATHSPECS": "1", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.quotePath", "GIT_CONFIG_VALUE_0": "false"}


@dataclass(frozen=True)
class Identity:
    """Author or committer of a commit or note, passed per git call (never through `os.environ`)."""

    name: str
    email: str


# The default author of candidates and notes: a run must not depend on the cron user's git config.
FRAMES_IDENTITY = Identity("frames", "frames@localhost")


@dataclass(frozen=True)
class LogEntry:
    """One commit listed by `GitStore.log`.

    Attributes:
        sha: 40-hex commit sha.
        parents: the parents' shas (empty for a root commit).
        message: the commit message without its trailer block, trailing whitespace removed.
        trailers: the trailers as {key: value}, parsed by git (the last of a repeated key wins).
        paths: workspace-relative paths the commit changed (within the paths asked for), sorted.
    """

    sha: str
    parents: tuple[str, ...]
    message: str
    trailers: dict[str, str]
    paths: tuple[str, ...]


@dataclass(frozen=True)
class FileStat:
    """Lines added and deleted in one file between two commits (0 and 0 for a binary file)."""

    path: str
    added: int
    deleted: int


@dataclass(frozen=True)
class DiffStat:
    """The `git diff --numstat` of two commits: one FileStat per changed file, sorted by path."""

    files: tuple[FileStat, ...]

    @property
    def insertions(self) -> int:
        """Lines added over all files (binary files count 0)."""
        return sum(f.added for f in self.files)

    @property
    def deletions(self) -> int:
        """Lines deleted over all files (binary files count 0)."""
        return sum(f.deleted for f in self.files)

    @property
    def lines_changed(self) -> int:
        """Inserted plus deleted lines: the "diff size" of the deploy menu."""
        return self.insertions + self.deletions


class GitStore:
    """Plumbing access to the git repository containing `root` (the workspace folder), seen from `root`.

    Paths in arguments and results are relative to `root` (see the module docstring). Never touches the user's index, working tree or checked-out branch. Methods raise `GitError`
    (exit code 1) when git refuses and `InputError` (exit code 2) for an unsafe ref or path name;
    user text is never passed to git as an option.
    """

    def __init__(self, root: Path):
        """Open the repository containing `root`; `self.root` becomes its top-level folder and
        `self.prefix` the path of `root` below it ("" at the top level, else "sub/dir/").

        Raises:
            GitError: `root` is not a folder inside a git work tree.
        """
        if not Path(root).is_dir():
            # GitPython would run git in the process's folder instead, and find some other repository.
            raise GitError(f"{root}: no such folder")
        here = Path(root).resolve()
        try:
            top, prefix, common = SessionGit(here).rev_parse("--show-toplevel", "--show-prefix", "--git-common-dir").split("\n")
        except (GitCommandError, OSError) as exc:
            detail = _stderr(exc) if isinstance(exc, GitCommandError) else str(exc)
            raise GitError(f"{root}: not a git repository ({detail})") from None
        self.root = Path(top)
        # Split on the line breaks alone, not stripped: a folder name may begin with a space.
        self.prefix = prefix
        # The repository's common git folder (shared by linked worktrees), for the notes lock;
        # git prints it relative to the folder it ran in.
        self._common_dir = here / common
        self._git = SessionGit(self.root)

    def repo_path(self, path: str) -> str:
        """The repository path (from the top level) of the workspace-relative POSIX `path`.

        "" is the workspace folder itself ("" at the top level, else the prefix without its "/").
        """
        return (self.prefix + path) if path else self.prefix.rstrip("/")

    def workspace_path(self, path: str) -> str | None:
        """The workspace-relative form of repository path `path`; None when it lies outside the workspace."""
        if not self.prefix:
            return path
        return path[len(self.prefix) :] if path.startswith(self.prefix) else None

    def _run(self, *args: str, env: dict[str, str] | None = None, stdin: BinaryIO | None = None) -> str:
        """`git args` in the repository (`env` added to the process's, `stdin` an open binary file).

        Returns stdout without its final newline. Raises GitError with git's message on failure.
        """
        try:
            return self._git.execute(["git", *args], env=env, istream=stdin)
        except GitCommandError as exc:
            raise GitError(f"git {args[0]} failed: {_stderr(exc)}") from None

    def resolve(self, ref: str) -> str:
        """The full 40-hex commit sha that `ref` (branch, tag, sha, `HEAD~2`, ...) names.

        Raises:
            UnknownRevisionError: `ref` is empty, looks like an option, or names no commit (exit 2:
                revisions come from the user); in a repository without any commit the message says
                how to make the first one.
        """
        if not ref or ref.startswith("-"):
            raise UnknownRevisionError(f"not a revision: {ref!r}")
        try:
            return self._git.rev_parse("--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        except GitCommandError:
            if not self._git.rev_list("-n", "1", "--all"):
                raise UnknownRevisionError(
                    f"unknown revision {ref!r}: the repository has no commit yet "
                    "(commit your skills first; `frames coldstart` makes the first commit)"
                ) from None
            raise UnknownRevisionError(f"unknown revision or not a commit: {ref!r}") from None

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
                if tree.type != "tree":
                    return {}
            blobs = [item for item in tree.traverse() if item.type == "blob" and f"{item.mode:o}" in _FILE_MODES]
            # Every blob lies under `folder`, itself inside the workspace: workspace_path never gives None here.
            return {self.workspace_path(b.path): b.data_stream.read() for b in sorted(blobs, key=lambda b: b.path)}  # type: ignore[misc]

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
            expected = {p for p in before if changes.get(p, b"") is not None} | {p for p, d in changes.items() if d is not None}
            lost = sorted(expected ^ self._index_paths(index_env))
            if lost:
                shown = (self.workspace_path(p) or p for p in lost[:5])
                raise GitError(f"a file and a folder would share a path in the commit: {', '.join(shown)}")
            tree = self._run("write-tree", env=index_env)
            (folder / "message").write_text(message if message.endswith("\n") else message + "\n", encoding="utf-8")
            commit_env = _identity_env(author, committer)
            if date is not None:
                stamp = _git_date(date)
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
            if mode in _FILE_MODES:
                modes[path] = mode
        return modes

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when commit `ancestor` is in the history of `descendant` (or is it); both are shas or
        refs that `resolve` accepts (`git merge-base --is-ancestor`).

        Raises:
            GitError: git failed for another reason than "not an ancestor" (exit status 1).
        """
        status, _out, err = self._git.execute(
            ["git", "merge-base", "--is-ancestor", self.resolve(ancestor), self.resolve(descendant)],
            with_extended_output=True, with_exceptions=False,
        )
        if status not in (0, 1):
            raise GitError(f"git merge-base failed: {err.strip()}")
        return status == 0

    def file_versions(self, ref: str, path: str, max_count: int = 50) -> Iterator[bytes]:
        """The contents of workspace file `path` in the commits of `ref`'s history that changed it,
        newest first, at most `max_count` (a commit that deleted it is skipped). Nothing when `ref`
        names no commit.

        Raises:
            GitError: git failed reading history that exists.
        """
        try:
            sha = self.resolve(ref)
        except UnknownRevisionError:
            return
        repo_path = self.repo_path(path)
        shas = self._run("log", f"--max-count={max_count}", "--format=%H", sha, "--", repo_path).split()
        for commit in shas:
            status, out, _err = self._git.execute(["git", "cat-file", "blob", f"{commit}:{repo_path}"], with_extended_output=True,
                                                  with_exceptions=False, stdout_as_string=False)
            if status == 0:
                yield out

    def merge_conflicts(self, ours: str, theirs: str) -> list[str]:
        """The files that merging `theirs` into `ours` would leave in conflict, repository-relative and
        sorted; [] when the merge would be clean. Computed in git's object store alone (`git
        merge-tree --write-tree`, git 2.38+): no working tree, index or ref is touched.

        Raises:
            GitError: git failed (for example older than 2.38, or unrelated histories).
        """
        status, out, err = self._git.execute(
            ["git", "merge-tree", "--write-tree", "--name-only", "--no-messages", self.resolve(ours), self.resolve(theirs)],
            with_extended_output=True, with_exceptions=False,
        )
        if status not in (0, 1):
            raise GitError(f"git merge-tree failed: {err.strip()}")
        # The first line is the merged tree's id; a conflicted merge lists its files after it.
        return sorted(set(out.splitlines()[1:])) if status == 1 else []

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

    def add_note(self, sha: str, text: str, *, author: Identity = FRAMES_IDENTITY) -> None:
        """Attach `text` to commit `sha` under refs/notes/frames, replacing any earlier note.

        The text is stored byte for byte (no whitespace clean-up), so JSON round-trips.

        Raises:
            GitError: `sha` names no commit, or another process held the notes lock for a minute.
        """
        self.edit_note(sha, lambda _old: text, author=author)

    def edit_note(self, sha: str, edit: Callable[[str | None], str | None], *, author: Identity = FRAMES_IDENTITY) -> str | None:
        """Replace commit `sha`'s note by `edit(old note or None)`, unless that returns None; holds
        the repository's notes lock from the read to the write. Returns the note written, or None.

        Every workspace of a repository shares refs/notes/frames, and the base commit's note is
        S0's of every run started from it; `git notes add` moves the notes ref without checking
        its old value, so two runs writing notes at once could lose one. The lock is a file in the
        repository's common git folder (`frames-notes.lock`), so it also covers linked worktrees.

        Raises:
            GitError: `sha` names no commit, or another process held the lock for a minute.
        """
        from filelock import FileLock, Timeout

        target = self.resolve(sha)
        lock = self._common_dir / "frames-notes.lock"
        try:
            with FileLock(str(lock), timeout=60):
                new = edit(self.read_note(target))
                if new is not None:
                    self._write_note(target, new, author)
        except Timeout:
            raise GitError(f"{lock}: another frames process held the notes lock for a minute") from None
        return new

    def _write_note(self, target: str, text: str, author: Identity) -> None:
        """Store `text` as commit `target`'s note (the caller holds the notes lock)."""
        with tempfile.TemporaryDirectory(prefix="frames-note-") as tmp:
            note = Path(tmp) / "note"
            note.write_text(text, encoding="utf-8")
            blob = self._run("hash-object", "-w", "--no-filters", "--", str(note))
        # -C reuses the blob as it is; -m/-F would strip blank lines and trailing spaces.
        self._run("notes", "--ref", NOTES_REF, "add", "-f", "-C", blob, target, env=_identity_env(author, author))

    def read_note(self, sha: str) -> str | None:
        """The refs/notes/frames note on commit `sha`, or None when it has none.

        Raises:
            GitError: `sha` names no commit.
        """
        target = self.resolve(sha)
        try:
            blob = self._git.notes("--ref", NOTES_REF, "list", target)
        except GitCommandError:
            return None
        with SessionRepo(self.root) as repo:
            return repo.odb.stream(bytes.fromhex(blob)).read().decode("utf-8")

    def diff(self, a: str, b: str, paths: Iterable[str] = (SKILLS_PREFIX,)) -> str:
        """The unified diff from commit `a` to commit `b`, limited to `paths` (workspace-relative
        folders or files, taken literally; "" means the workspace's whole folder). File names in
        the diff are workspace-relative too ("a/skills/x/SKILL.md").

        Colour, external diff drivers and text conversion filters are off and non-ASCII paths are
        not quoted, so the text is the same for every user; renames are detected.

        Raises:
            GitError: `a` or `b` names no commit.
        """
        return self._diff(a, b, ("--find-renames",), paths)

    def diff_stat(self, a: str, b: str, paths: Iterable[str] = (SKILLS_PREFIX,)) -> DiffStat:
        """Lines added and deleted per file from commit `a` to commit `b` under `paths` (as in `diff`);
        `FileStat.path` is workspace-relative.

        Raises:
            GitError: `a` or `b` names no commit.
        """
        listing = self._diff(a, b, ("--numstat", "-z", "--no-renames"), paths)
        stats = []
        for entry in filter(None, listing.split("\0")):
            added, deleted, path = entry.split("\t", 2)
            # numstat prints "-" for binary files: they have no lines to count.
            stats.append(FileStat(path, int(added) if added != "-" else 0, int(deleted) if deleted != "-" else 0))
        return DiffStat(tuple(sorted(stats, key=lambda s: s.path)))

    def _diff(self, a: str, b: str, options: tuple[str, ...], paths: Iterable[str]) -> str:
        """`git diff options a b -- paths` with user-independent settings, seen from the workspace (see `diff`)."""
        specs = [self.repo_path(path) or "." for path in paths]
        # --relative=<prefix> leaves out changes outside the workspace and prints paths from it.
        relative = (f"--relative={self.prefix}",) if self.prefix else ()
        return self._run(
            "diff", "--no-color", "--no-ext-diff", "--no-textconv", *relative, *options, self.resolve(a), self.resolve(b),
            "--", *specs, env=_LISTING_ENV,
        )

    def log(self, ref: str, paths: Iterable[str] = (SKILLS_PREFIX,), max_count: int = 100) -> list[LogEntry]:
        """The non-merge commits reachable from `ref` that changed `paths`, newest first.

        Args:
            ref: any revision `resolve` accepts.
            paths: workspace-relative folders or files, taken literally ("" means the whole workspace).
            max_count: most commits listed (0 lists none).

        Raises:
            GitError: `ref` names no commit.
        """
        if max_count <= 0:
            return []
        # NUL opens each record and ends each field: git refuses NUL in commit messages, and file
        # names cannot hold it, whereas any other control character may be in a message.
        fmt = "%x00%H%x00%P%x00%B%x00%(trailers:only,unfold)%x00"
        listing = self._run(
            "log", "--no-merges", "--no-color", f"--max-count={max_count}", f"--format={fmt}", "--name-only",
            self.resolve(ref), "--", *[self.repo_path(path) or "." for path in paths], env=_LISTING_ENV,
        )
        fields = listing.split("\x00")[1:]
        entries = []
        for at in range(0, len(fields), 5):
            sha, parents, message, trailer_text, names = fields[at : at + 5]
            trailers = dict(line.split(": ", 1) for line in trailer_text.splitlines() if ": " in line)
            message = message.rstrip()
            if trailers:
                # git's trailer block is always the message's last paragraph.
                message = message.rpartition("\n\n")[0].rstrip()
            changed = sorted(p for p in map(self.workspace_path, filter(None, names.splitlines())) if p is not None)
            entries.append(LogEntry(sha, tuple(parents.split()), message, trailers, tuple(changed)))
        return entries

    def trailers(self, sha: str) -> dict[str, str]:
        """The trailers of commit `sha`'s message as {key: value}, parsed by git; the last of a repeated key wins.

        Raises:
            GitError: `sha` names no commit.
        """
        listing = self._run("log", "-1", "--format=%(trailers:only,unfold)", self.resolve(sha))
        return dict(line.split(": ", 1) for line in listing.splitlines() if ": " in line)


def commit_message(summary: str, body: str = "", trailers: dict[str, str] | None = None) -> str:
    """A commit message: `summary` line, blank line, `body`, blank line, one `Key: value` line per trailer.

    Trailers are what `git interpret-trailers` and `GitStore.trailers` read back (frames uses
    `Frames-Run`, `Frames-Parent`, `Frames-Models`; see docs/DECISIONS.md).

    Control, bidirectional and zero-width characters are removed from every part (`sanitize.clean`;
    the summary and trailer values are also kept on one line).

    Raises:
        ValueError: `summary` is blank or has a line break, a trailer key is not `[A-Za-z0-9-]+`, or a
            trailer value has a line break.
    """
    if not summary.strip() or "\n" in summary:
        raise ValueError(f"commit summary must be one non-blank line: {summary!r}")
    # File names, headings and model text reach messages: no control, bidi or zero-width character
    # (git refuses NUL; the rest would act on a reviewer's terminal in `git log`).
    summary, body = one_line(summary), redact_secrets(clean(body), REDACTED)
    parts = [summary.strip()]
    if body.strip():
        parts.append(body.strip("\n"))
    if trailers:
        lines = []
        for key, value in trailers.items():
            if not _TRAILER_KEY.match(key):
                raise ValueError(f"bad trailer key {key!r}")
            if "\n" in value or "\r" in value:
                raise ValueError(f"trailer {key} value has a line break")
            lines.append(f"{key}: {one_line(value)}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def check_ref_name(ref: str) -> str:
    """Return `ref` if git accepts it as a full ref name (`git check-ref-format`) and it is no option.

    Use on every ref built from user text (run ids, candidate ids, `--branch` names).

    Raises:
        InputError: the name starts with "-" or `git check-ref-format` rejects it (for example "..",
            spaces, "~", "^", ":", "@{", a trailing ".lock" or "/").
    """
    if not ref or ref.startswith("-") or "\0" in ref:
        raise InputError(f"unsafe ref name {ref!r}")
    try:
        SessionGit().check_ref_format(ref)
    except GitCommandError:
        raise InputError(f"unsafe ref name {ref!r}: git check-ref-format rejects it") from None
    return ref


def check_path(path: str) -> str:
    """Return `path` if it is a safe workspace-relative POSIX file path, for `commit_files` and
    `worktree.commit_paths` (both map it to the repository with `GitStore.repo_path`).

    Raises:
        InputError: empty, absolute, with a backslash or NUL, or with an empty, `.`, `..` or `.git` part.
    """
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or "\0" in path
        or any(part in ("", ".", "..") or part.lower() == ".git" for part in path.split("/"))
    ):
        raise InputError(f"unsafe path in a commit: {path!r}")
    return path


def _identity_env(author: Identity, committer: Identity) -> dict[str, str]:
    """Environment for one git call that names its author and committer (os.environ stays as it is)."""
    return {
        "GIT_AUTHOR_NAME": author.name,
        "GIT_AUTHOR_EMAIL": author.email,
        "GIT_COMMITTER_NAME": committer.name,
        "GIT_COMMITTER_EMAIL": committer.email,
    }


def _git_date(when: datetime) -> str:
    """`when` in git's internal date format ("<unix seconds> +HHMM"); naive datetimes are UTC.

    Git rejects "+00:00" style offsets (NOTES-libraries.md), so the offset is formatted by hand.
    """
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    minutes = int(when.utcoffset().total_seconds() // 60)  # type: ignore[union-attr]
    sign = "+" if minutes >= 0 else "-"
    return f"{int(when.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def _stderr(exc: GitCommandError) -> str:
    """Git's own message from a failed command, on one line."""
    text = exc.stderr if isinstance(exc.stderr, str) else str(exc)
    return " ".join(text.replace("stderr:", "").split()).strip("' ")
