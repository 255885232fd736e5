"""GitNotes: frames' notes on commits (refs/notes/frames), read
and written byte for byte under the repository's notes lock."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from git.exc import GitCommandError

from frames_cli.errors import GitError
from frames_cli.gitstore.identity import FRAMES_IDENTITY, Identity, identity_env
from frames_cli.gitstore.process import SessionRepo
from frames_cli.gitstore.repo import GitRepo

NOTES_REF = "refs/notes/frames"


class GitNotes(GitRepo):
    """The notes part of GitStore: one note per commit under NOTES_REF, shared by every workspace of the repository."""

    def add_note(self, sha: str, text: str, *, author: Identity = FRAMES_IDENTITY) -> None:
        """Attach `text` to commit `sha` under refs/notes/frames, replacing any earlier note.

        The text is stored byte for byte (no whitespace clean-up), so JSON round-trips.

        Raises:
            GitError: `sha` names no commit, or another process held the notes lock for a minute.
        """
        self.edit_note(sha, lambda _old: text, author=author)

    def edit_note(
        self, sha: str, edit: Callable[[str | None], str | None], *, author: Identity = FRAMES_IDENTITY
    ) -> str | None:
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
        self._run("notes", "--ref", NOTES_REF, "add", "-f", "-C", blob, target, env=identity_env(author, author))

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
