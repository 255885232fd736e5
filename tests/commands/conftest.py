"""Fixtures of the command tests: a workspace after one `frames evolve` (publish and CI examples)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.airline import build_repo
from typer.testing import CliRunner

from frames_cli.commands.app import app


@pytest.fixture(scope="module")
def evolved_template(tmp_path_factory) -> tuple[Path, dict]:
    """A workspace after one `frames evolve` that made a review branch (built once per module)."""
    root = tmp_path_factory.mktemp("publish") / "ws"
    build_repo(root)
    done = CliRunner().invoke(app, ["evolve", "--repo", str(root), "--json"])
    assert done.exit_code == 0, done.output
    menu = json.loads(done.stdout)
    assert menu["branch"], "the fixture's run must make a review branch"
    return root, menu
