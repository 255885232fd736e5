"""The bundled example as the benches copy it: one place that knows which files make it up."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What makes up the bundled example: settings, policies, skills, τ²'s train split in cases/, its
#: test split in holdout/, and the .gitignore that keeps .frames/ out of commits.
EXAMPLE = ("frames.yaml", "policies", "skills", "cases", "holdout", ".gitignore")


def copy_example(root: Path) -> Path:
    """Copy the bundled example into `root` (made, with its parents; it must not exist yet) and
    return `root`. Raises FileExistsError when `root` exists, OSError when a copy fails."""
    root.mkdir(parents=True)
    for name in EXAMPLE:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
    return root
