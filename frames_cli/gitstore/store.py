"""GitStore: git plumbing for frames (read trees, commit trees, refs, notes, branches), never the checkout.

Every write goes through object-level plumbing (`hash-object`, a temporary index named by
`GIT_INDEX_FILE`, `write-tree`, `commit-tree`, `update-ref`), so the user's index file, working
tree and checked-out branch stay exactly as they were. Text that came from users (run ids, branch
names, candidate names) is validated with `git check-ref-format` before it becomes part of a ref,
and revisions are passed after `--end-of-options`, so no user text is ever read as a git option.
"""

from __future__ import annotations

from pathlib import Path

from git import Repo
from git.cmd import Git
from git.exc import GitCommandError

from frames_cli.errors import GitError

SKILLS_PREFIX = "skills/"
# Regular files only: symlinks could point outside `skills/`, submodules are not skill text.
_FILE_MODES = {"100644", "100755"}


class GitStore:
    """Plumbing access to the git repository at `root` (the workspace root or any folder inside it).

    Never touches the user's index, working tree or checked-out branch. Methods raise `GitError`
    (exit code 1) when git refuses, and never pass user text as a git option.
    """

    def __init__(self, root: Path):
        """Open the repository containing `root`.

        Raises:
            GitError: `root` is not inside a git work tree.
        """
        self.root = Path(root).resolve()
        self._git = Git(self.root)
        try:
            self._git.rev_parse("--git-dir")
        except GitCommandError as exc:
            raise GitError(f"{self.root}: not a git repository ({_stderr(exc)})") from None

    def resolve(self, ref: str) -> str:
        """The full 40-hex commit sha that `ref` (branch, tag, sha, `HEAD~2`, ...) names.

        Raises:
            GitError: `ref` is empty, looks like an option, or names no commit.
        """
        if not ref or ref.startswith("-"):
            raise GitError(f"not a revision: {ref!r}")
        try:
            return self._git.rev_parse("--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        except GitCommandError:
            raise GitError(f"unknown revision or not a commit: {ref!r}") from None

    def read_files(self, ref: str, prefix: str = SKILLS_PREFIX) -> dict[str, bytes]:
        """The regular files under `prefix` in the tree of commit `ref`, without checking anything out.

        Args:
            ref: any revision `resolve` accepts.
            prefix: a folder path relative to the repository root ("skills/"); "" reads the whole tree.

        Returns:
            {repository-relative POSIX path ("skills/x/SKILL.md"): file bytes}, sorted by path;
            empty when the folder does not exist at `ref`. Symlinks and submodules are skipped.

        Raises:
            GitError: `ref` names no commit.
        """
        sha = self.resolve(ref)
        folder = prefix.strip("/")
        with Repo(self.root) as repo:
            tree = repo.commit(sha).tree
            if folder:
                try:
                    tree = tree / folder
                except KeyError:
                    return {}
                if tree.type != "tree":
                    return {}
            blobs = [item for item in tree.traverse() if item.type == "blob" and f"{item.mode:o}" in _FILE_MODES]
            return {blob.path: blob.data_stream.read() for blob in sorted(blobs, key=lambda b: b.path)}


def _stderr(exc: GitCommandError) -> str:
    """Git's own message from a failed command, on one line."""
    text = exc.stderr if isinstance(exc.stderr, str) else str(exc)
    return " ".join(text.replace("stderr:", "").split()).strip("' ")
