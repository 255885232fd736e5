"""GitRemote: pushing to a remote: a review branch (created, fast-forwarded, never a person's
commit overwritten) and refs/notes/frames (merged with the remote's, never overwritten)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from frames_cli.errors import GitError, InputError
from frames_cli.gitstore.identity import FRAMES_IDENTITY, identity_env
from frames_cli.gitstore.notes import NOTES_REF, GitNotes

#: Where a remote's branch or notes are fetched to compare with ours; removed afterwards.
#: The notes one lies under refs/notes/ because `git notes merge` only merges notes refs.
FETCHED_BRANCH = "refs/frames/fetched/branch"
FETCHED_NOTES = "refs/notes/frames-fetched"
#: Pushes retried when the remote moved between our look and our push (another CI job pushed notes).
PUSH_ATTEMPTS = 3


@dataclass(frozen=True)
class BranchPush:
    """What pushing a branch did.

    Attributes:
        action: "created" (the remote had no such branch), "updated" (fast-forwarded), "replaced"
            (the remote held an older commit `replaceable` accepted; leased push), "unchanged"
            (already there) or "behind" (the remote has commits on top of ours, a person's
            follow-ups: left as they are).
        remote_before: the remote branch's commit before the push (None: it had none).
    """

    action: str
    remote_before: str | None


def _quiet_env() -> dict[str, str]:
    # Cron and CI have no terminal: git must fail rather than wait for a password prompt.
    return {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": os.environ.get("GIT_ASKPASS", "") or "true"}


class GitRemote(GitNotes):
    """The remote part of GitStore (gitstore/store.py): the review branch and frames' notes pushed to a remote."""

    def _ref_sha(self, ref: str) -> str | None:
        """The commit the local full ref `ref` names, or None when it does not exist."""
        found = self._run("for-each-ref", "--format=%(objectname)", ref)
        return found or None

    def check_remote(self, remote: str) -> str:
        """`remote` as git will use it: a configured remote's name, or a URL or path of a repository.

        Raises:
            InputError: `remote` looks like an option, or is neither a configured remote nor a URL or
                an existing path (exit 2; the message lists the configured remotes).
        """
        if not remote or remote.startswith("-"):
            raise InputError(f"not a remote: {remote!r}")
        names = self._run("remote").split()
        if remote in names or "://" in remote or ":" in remote.split("/", 1)[0] or Path(remote).exists():
            return remote
        known = ", ".join(names) if names else "none; add one with `git remote add origin URL`"
        raise InputError(f"no remote named {remote!r} (configured: {known})")


    def remote_label(self, remote: str) -> str:
        """The remote's URL without credentials (a CI token in `https://x:TOKEN@host/...` is
        dropped), for records; a path, or a URL given as the remote, is returned as it is."""
        try:
            url = self._run("remote", "get-url", "--", remote)
        except GitError:
            url = remote
        parts = urlsplit(url)
        if parts.scheme and "@" in parts.netloc:
            return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
        return url

    def remote_sha(self, remote: str, ref: str) -> str | None:
        """The commit `ref` (a full ref) points at on `remote`, or None when it has no such ref.

        Raises:
            GitError: the remote cannot be reached (git's message quoted).
        """
        listing = self._run("ls-remote", "--end-of-options", remote, ref, env=_quiet_env())
        for line in listing.splitlines():
            sha, _, name = line.partition("\t")
            if name == ref:
                return sha
        return None


    def _fetch(self, remote: str, ref: str, into: str) -> None:
        self._run("fetch", "--quiet", "--no-tags", "--end-of-options", remote, f"+{ref}:{into}", env=_quiet_env())


    def _is_ancestor(self, older: str, newer: str) -> bool:
        try:
            self._run("merge-base", "--is-ancestor", older, newer)
        except GitError:
            return False
        return True


    def push_branch(self, remote: str, name: str, sha: str, *, replaceable: Callable[[str], bool]) -> BranchPush:
        """Make branch `name` on `remote` hold commit `sha`, without losing anything pushed there.

        Created when missing; fast-forwarded when the remote's commit is an ancestor of `sha`; left as
        it is when the remote already has `sha` with commits on top. A remote commit that is neither is
        replaced only when `replaceable(commit)` says frames made it (an earlier best member of the
        same run), with `--force-with-lease` naming that commit, so a push by someone in between is
        never overwritten.

        Raises:
            GitError: the remote cannot be reached or refused the push, or holds a commit frames did
                not make that `sha` does not contain (a person's work: never overwritten).
        """
        ref = f"refs/heads/{name}"
        before = self.remote_sha(remote, ref)
        if before == sha:
            return BranchPush("unchanged", before)
        if before is None:
            self._run(
                "push", "--quiet", f"--force-with-lease={ref}:", "--end-of-options", remote, f"{sha}:{ref}",
                env=_quiet_env(),
            )
            return BranchPush("created", None)
        try:
            self._fetch(remote, ref, FETCHED_BRANCH)
            if self._is_ancestor(before, sha):
                self._run("push", "--quiet", "--end-of-options", remote, f"{sha}:{ref}", env=_quiet_env())
                return BranchPush("updated", before)
            if self._is_ancestor(sha, before):
                return BranchPush("behind", before)
            if not replaceable(before):
                raise GitError(
                    f"{remote} {name} is at {before[:12]}, a commit frames did not make and that {sha[:12]} does not "
                    "contain; it is left as it is (merge or delete it on the remote, then publish again)"
                )
            self._run(
                "push", "--quiet", f"--force-with-lease={ref}:{before}", "--end-of-options", remote, f"{sha}:{ref}",
                env=_quiet_env(),
            )
            return BranchPush("replaced", before)
        finally:
            self._run("update-ref", "-d", FETCHED_BRANCH)


    def push_notes(self, remote: str, merge: Callable[[str, str], str]) -> str:
        """Bring `remote`'s refs/notes/frames into ours and push the result, so both hold every note.

        Another host's notes (an earlier CI job's runs) are merged in, never overwritten: `git notes
        merge -s ours` keeps both sides' notes, and a commit noted on both sides (the base commit is
        S0 of every run started from it) gets `merge(ours, theirs)`. The push is then a fast-forward;
        when the remote moved meanwhile, the whole step is repeated (PUSH_ATTEMPTS times).

        Returns:
            "pushed", "merged" (pushed after merging notes only the remote had), "unchanged" (the
            remote already had our notes) or "none" (we have no notes).

        Raises:
            GitError: the remote cannot be reached, or kept moving on every attempt.
        """
        for _ in range(PUSH_ATTEMPTS):
            ours = self._ref_sha(NOTES_REF)
            if ours is None:
                return "none"
            theirs = self.remote_sha(remote, NOTES_REF)
            if theirs == ours:
                return "unchanged"
            merged = theirs is not None and not self._is_ancestor(theirs, ours)
            if merged:
                self._merge_notes(remote, merge)
                if self._ref_sha(NOTES_REF) == theirs:  # theirs held all of ours: a fast-forward
                    return "unchanged"
            try:
                self._run("push", "--quiet", "--end-of-options", remote, f"{NOTES_REF}:{NOTES_REF}", env=_quiet_env())
                return "merged" if merged else "pushed"
            except GitError as exc:
                last = exc
        raise GitError(f"{remote} kept receiving other notes while frames pushed its own ({last})")

    def sync_notes(self, remote: str, merge: Callable[[str, str], str]) -> bool:
        """Bring `remote`'s refs/notes/frames into ours (as `push_notes` does), without pushing: a
        fresh clone then knows what earlier jobs recorded (their publications, their runs).

        Returns:
            Whether the remote had notes ours lacked (fetched or merged in).

        Raises:
            GitError: the remote cannot be reached.
        """
        theirs = self.remote_sha(remote, NOTES_REF)
        ours = self._ref_sha(NOTES_REF)
        if theirs is None or theirs == ours:
            return False
        if ours is None:
            self._fetch(remote, NOTES_REF, NOTES_REF)
            return True
        if self._is_ancestor(theirs, ours):
            return False
        self._merge_notes(remote, merge)
        return True

    def _notes(self, ref: str) -> dict[str, str]:
        """{annotated commit: note blob} of notes ref `ref`."""
        listing = self._run("notes", "--ref", ref, "list")
        return {obj: blob for blob, obj in (line.split() for line in listing.splitlines() if line)}


    def _merge_notes(self, remote: str, merge: Callable[[str, str], str]) -> None:
        self._fetch(remote, NOTES_REF, FETCHED_NOTES)
        try:
            ours, theirs = self._notes(NOTES_REF), self._notes(FETCHED_NOTES)
            env = identity_env(FRAMES_IDENTITY, FRAMES_IDENTITY)
            self._run("notes", "--ref", NOTES_REF, "merge", "--quiet", "-s", "ours", FETCHED_NOTES, env=env)
            for commit, blob in theirs.items():
                if commit in ours and ours[commit] != blob:
                    their_text = self._run("cat-file", "blob", blob)
                    self.edit_note(commit, _merged_with(merge, their_text))
        finally:
            self._run("update-ref", "-d", FETCHED_NOTES)


def _merged_with(merge: Callable[[str, str], str], theirs: str) -> Callable[[str | None], str]:
    """An `edit_note` edit: our note (none: "") merged with `theirs` by `merge`."""
    return lambda mine: merge(mine or "", theirs)
