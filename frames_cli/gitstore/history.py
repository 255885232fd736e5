"""GitHistory: reading a workspace's history (log, trailers, diffs,
ancestry, file versions, merge conflicts) without a checkout."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from frames_cli.errors import GitError, UnknownRevisionError
from frames_cli.gitstore.message import parse_trailers
from frames_cli.gitstore.repo import SKILLS_PREFIX, GitRepo

# Paths in diff and log listings: taken literally (no pathspec magic) and printed unquoted (non-ASCII).
_LISTING_ENV = {
    "GIT_LITERAL_PATHSPECS": "1", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.quotePath",
    "GIT_CONFIG_VALUE_0": "false",
}


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


class GitHistory(GitRepo):
    """The history reads of GitStore: commits, trailers and diffs seen from the workspace folder."""

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
            status, out, _err = self._git.execute(
                ["git", "cat-file", "blob", f"{commit}:{repo_path}"], with_extended_output=True, with_exceptions=False,
                stdout_as_string=False,
            )
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
            [
                "git", "merge-tree", "--write-tree", "--name-only", "--no-messages", self.resolve(ours),
                self.resolve(theirs),
            ],
            with_extended_output=True, with_exceptions=False,
        )
        if status not in (0, 1):
            raise GitError(f"git merge-tree failed: {err.strip()}")
        # The first line is the merged tree's id; a conflicted merge lists its files after it.
        return sorted(set(out.splitlines()[1:])) if status == 1 else []

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
            "diff", "--no-color", "--no-ext-diff", "--no-textconv", *relative, *options, self.resolve(a),
            self.resolve(b), "--", *specs, env=_LISTING_ENV,
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
            trailers = parse_trailers(trailer_text)
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
        return parse_trailers(listing)
