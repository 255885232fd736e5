"""Typed frames errors and the exit codes they map to (one place, used by every command)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
# sysexits.h EX_TEMPFAIL: cron wrappers treat it as "try later", so a busy repo is skipped quietly.
EXIT_LOCKED = 75
# promptfoo's convention for "ran fine, but a threshold or gate failed".
EXIT_THRESHOLD = 100


class FramesWarning(UserWarning):
    """Base class of what frames tells the user and goes on (`warnings.warn`): the CLI prints it as
    `warning: <message>` on stderr (commands/app.main)."""


class FramesError(Exception):
    """Base class of every error frames raises on purpose.

    Attributes:
        exit_code: the process exit code the CLI uses for this error.
    """

    exit_code: int = EXIT_RUNTIME


@dataclass(frozen=True)
class Location:
    """A place in a user file: `path` and a 1-based `line` (None when the whole file is meant)."""

    path: Path | str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else f"{self.path}"


class InputError(FramesError):
    """Bad input from the user: a file that cannot be read or does not follow its format.

    The message is rendered as ``path:line: message`` so editors can jump to it.
    Exit code 2.
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: str, location: Location | None = None):
        self.message = message
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)


class ConfigError(InputError):
    """`frames.yaml` is malformed: unknown key, wrong type, bad value. Exit code 2."""


class ModelSetupError(ConfigError):
    """A provider refused a model's credentials, does not know the model, or no key is set.

    Raised at the first such failure, never retried (every later call would fail alike); the
    message names the role, the model, the provider and the key's environment variable. Exit code 2.
    """


class LockedError(FramesError):
    """Another frames run holds the repository lock. Exit code 75 (EX_TEMPFAIL)."""

    exit_code = EXIT_LOCKED


class ThresholdError(FramesError):
    """A gate or a `--min-pass-rate` threshold failed. Exit code 100."""

    exit_code = EXIT_THRESHOLD


class BudgetExceeded(FramesError):
    """The run's token or USD budget is spent; raised between model calls. Exit code 1."""


class ModelError(FramesError):
    """A model call failed after all retries (rate limit, timeout, provider error). Exit code 1."""


class GitError(FramesError):
    """A git operation failed or the repository is in a state frames will not touch. Exit code 1."""


class UnknownRevisionError(InputError, GitError):
    """A revision the user named (`--ref`, `--git A..B`, `--base`) names no commit. Exit code 2.

    Also a GitError, so code that treats any git failure alike (`except GitError`) still catches it.
    """
