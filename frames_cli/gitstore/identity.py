"""Who and when a commit or note records: Identity, the environment of one git call naming them, git's date format."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class Identity:
    """Author or committer of a commit or note, passed per git call (never through `os.environ`)."""

    name: str
    email: str


# The default author of candidates and notes: a run must not depend on the cron user's git config.
FRAMES_IDENTITY = Identity("frames", "frames@localhost")


def identity_env(author: Identity, committer: Identity) -> dict[str, str]:
    """Environment for one git call that names its author and committer (os.environ stays as it is)."""
    return {
        "GIT_AUTHOR_NAME": author.name,
        "GIT_AUTHOR_EMAIL": author.email,
        "GIT_COMMITTER_NAME": committer.name,
        "GIT_COMMITTER_EMAIL": committer.email,
    }


def git_date(when: datetime) -> str:
    """`when` in git's internal date format ("<unix seconds> +HHMM"); naive datetimes are UTC.

    Git rejects "+00:00" style offsets (NOTES-libraries.md), so the offset is formatted by hand.
    """
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    minutes = int(when.utcoffset().total_seconds() // 60)  # type: ignore[union-attr]
    sign = "+" if minutes >= 0 else "-"
    return f"{int(when.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"
