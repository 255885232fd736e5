"""Git run on a path, and the refs of a bare remote (publish tests)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    """Run `git ARGS` in `cwd`; returns stdout stripped. Raises CalledProcessError when git fails."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def remote_refs(bare: Path) -> dict[str, str]:
    """Ref name → commit of every ref in the repository `bare`."""
    lines = git(bare, "for-each-ref", "--format=%(objectname)\t%(refname)").splitlines()
    return {ref: sha for sha, ref in (line.split("\t") for line in lines)}
