"""Test helpers shared by every test folder: real git repositories here (`from helpers import GitRepo`),
the workspaces several test modules build in the package's modules (`from helpers.airline import build_repo`).

They live outside conftest.py and the test modules because a test module imports no other test module
and no conftest (tests/test_test_hygiene.py): a bare `from conftest import ...` resolves to whichever
conftest pytest loaded first under that name, and `.conftest` and `tests.evolution.conftest` are two
copies of one module.
"""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from dataclasses import dataclass
from pathlib import Path


@dataclass
class GitRepo:
    """A real temporary git repository rooted at `root` and a git runner for it."""

    root: Path

    def git(self, *args: str) -> str:
        """Run `git args` in the repository; returns stdout without the final newline.

        Raises subprocess.CalledProcessError when git exits non-zero."""
        done = subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True, text=True)
        return done.stdout.rstrip("\n")

    def write(self, relpath: str, text: str) -> Path:
        """Write `text` to `root/relpath`, creating parent folders; returns the file's path."""
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path


def init_git_repo(root: Path) -> GitRepo:
    """`git init` the folder `root` (created with its parents; it must not exist yet) on branch `main`,
    with a repository-local identity and commit signing off; nothing is committed."""
    repo = GitRepo(root)
    root.mkdir(parents=True)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.name", "Test User")
    repo.git("config", "user.email", "test@example.com")
    repo.git("config", "commit.gpgsign", "false")
    return repo


def agentskills_command() -> str | None:
    """Path of skills-ref's `agentskills` command (a test extra): the one installed beside this
    interpreter, as when pytest runs as `/path/to/venv/bin/python -m pytest` without the venv on
    PATH; else the one on PATH; None when neither exists."""
    beside = Path(sysconfig.get_path("scripts")) / "agentskills"
    return str(beside) if beside.is_file() else shutil.which("agentskills")


#: The provider prefix of the tests' scripted models (`scripted/<role>`).
SCRIPTED = "scripted"


def install_scripted(handler: object) -> None:
    """Register `handler` (a litellm CustomLLM) as the `scripted/` provider, replacing any earlier
    one; `remove_scripted` takes it out again."""
    from litellm.utils import custom_llm_setup

    from frames_cli.llm.transport.providers import litellm_module

    litellm = litellm_module()
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != SCRIPTED] + [
        {"provider": SCRIPTED, "custom_handler": handler}
    ]
    custom_llm_setup()


def remove_scripted() -> None:
    """Take the `scripted/` provider out of litellm's provider map."""
    from frames_cli.llm.transport.providers import litellm_module

    litellm = litellm_module()
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != SCRIPTED]
