"""Where things live in a workspace: the user's git repo with `frames.yaml` at its top."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frames_cli.errors import InputError, Location
from frames_cli.workspace.config import CONFIG_FILE, FramesConfig
from frames_cli.workspace.config_file import load_config

STATE_DIR = ".frames"


@dataclass(frozen=True)
class Workspace:
    """A frames workspace rooted at `root` (absolute path).

    Layout (DESIGN §2): `frames.yaml`, `policies/`, `skills/<name>/SKILL.md`, `cases/`, and the
    git-ignored `.frames/` holding caches, run state, logs and the lock.
    """

    root: Path

    @classmethod
    def open(cls, repo: Path | None = None) -> Workspace:
        """Open the workspace that holds `repo` (default: the current folder), as git finds its repository.

        The workspace is the nearest folder, `repo` itself or one of its parents, that holds
        `frames.yaml`; the search stops at the root of the git repository `repo` lies in (the
        folder holding `.git`), so a workspace in a monorepo's subfolder is found from its
        `skills/` and never one of another repository. Outside any git repository only `repo`
        itself is looked at.

        Raises:
            InputError: the folder does not exist, or no `frames.yaml` is found (exit code 2).
        """
        start = Path(repo or Path.cwd()).resolve()
        if not start.is_dir():
            raise InputError("no such folder", Location(start))
        root = find_workspace_root(start)
        if root is None:
            top = repository_root(start)
            where = f"here or in a parent folder up to the repository root {top}" if top and top != start else "here"
            raise InputError(
                f"not a frames workspace: no {CONFIG_FILE} {where} (run `frames init` first)", Location(start)
            )
        return cls(root)

    def config(self) -> FramesConfig:
        """Load and validate `frames.yaml` (raises ConfigError with file and line)."""
        return load_config(self.root)

    @property
    def config_path(self) -> Path:
        """`<root>/frames.yaml`."""
        return self.root / CONFIG_FILE

    @property
    def policies_dir(self) -> Path:
        """`<root>/policies/`: the policy documents."""
        return self.root / "policies"

    @property
    def skills_dir(self) -> Path:
        """`<root>/skills/`: one folder per skill with its SKILL.md."""
        return self.root / "skills"

    @property
    def cases_dir(self) -> Path:
        """`<root>/cases/`: case files (.yaml, .yml or .jsonl)."""
        return self.root / "cases"

    @property
    def state_dir(self) -> Path:
        """`<root>/.frames/`: frames' own state (cache, runs, lock); git-ignored (see `make_state_dir`)."""
        return self.root / STATE_DIR

    def make_state_dir(self) -> Path:
        """Create `.frames/` (if missing) with a `.gitignore` of `*` in it; returns the folder.

        The `.gitignore` inside keeps frames' state out of `git status` wherever the workspace
        lives, a subfolder of a monorepo included, whatever the repository's own ignore files say
        (pytest's and mypy's caches do the same). An existing `.frames/.gitignore` is left as it is.

        Raises:
            InputError: `.frames` is a symlink (frames writes nothing outside the workspace).
            OSError: the folder or file cannot be written.
        """
        from frames_cli.files.atomic import atomic_write_text
        from frames_cli.files.links import refuse_symlink

        refuse_symlink(self.root, self.state_dir, STATE_DIR)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        ignore = self.state_dir / ".gitignore"
        if not ignore.exists():
            atomic_write_text(ignore, "# Written by frames: its state (cache, runs, lock) is not for git.\n*\n")
        return self.state_dir

    @property
    def cache_dir(self) -> Path:
        """`.frames/cache/`: cached model answers."""
        return self.state_dir / "cache"

    @property
    def runs_dir(self) -> Path:
        """`.frames/runs/`: one folder per evolve run."""
        return self.state_dir / "runs"

    @property
    def lock_path(self) -> Path:
        """`.frames/lock`: the workspace's file lock (workspace/lock.py), one holder at a time."""
        return self.state_dir / "lock"

    def relative(self, path: Path) -> str:
        """`path` relative to the workspace root, POSIX style (for messages and back-links)."""
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def repository_root(start: Path) -> Path | None:
    """The top folder of the git working tree `start` lies in (the one holding `.git`, a folder or
    a file as in linked worktrees and submodules), or None outside any repository.

    Args:
        start: an absolute, resolved folder.
    """
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def find_workspace_root(start: Path) -> Path | None:
    """The nearest folder from `start` upwards that holds `frames.yaml`, not above the repository
    root (see `Workspace.open`); None when there is none.

    Args:
        start: an absolute, resolved folder.
    """
    top = repository_root(start)
    if top is None:
        return start if (start / CONFIG_FILE).is_file() else None
    for folder in (start, *start.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder
        if folder == top:
            return None
    return None
