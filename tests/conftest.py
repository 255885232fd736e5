"""Shared fixtures. Tests are offline: litellm must never fetch its price table."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@dataclass
class GitRepo:
    """A real temporary git repository (branch `main`, one commit with two skills) and a git runner."""

    root: Path

    def git(self, *args: str) -> str:
        """Run `git args` in the repository; returns stdout without the final newline."""
        done = subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True, text=True)
        return done.stdout.rstrip("\n")

    def write(self, relpath: str, text: str) -> Path:
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    """`skills/alpha/SKILL.md`, `skills/beta/SKILL.md`, an executable `skills/beta/scripts/run.sh`
    and `README.md`, committed on `main` by a repository-local identity."""
    repo = GitRepo(tmp_path / "repo")
    repo.root.mkdir()
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.name", "Test User")
    repo.git("config", "user.email", "test@example.com")
    repo.git("config", "commit.gpgsign", "false")
    repo.write("README.md", "readme\n")
    repo.write("skills/alpha/SKILL.md", "---\nname: alpha\n---\nAlpha body.\n")
    repo.write("skills/beta/SKILL.md", "---\nname: beta\n---\nBeta body.\n")
    repo.write("skills/beta/scripts/run.sh", "#!/bin/sh\necho hi\n").chmod(0o755)
    repo.git("add", ".")
    repo.git("commit", "-q", "-m", "initial skills")
    return repo
