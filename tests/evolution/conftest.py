"""Fixtures of the evolution tests: the airline workspace of helpers/airline.py, committed."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.airline import EvolveRepo, build_repo


@pytest.fixture
def evolve_repo(tmp_path: Path) -> EvolveRepo:
    return build_repo(tmp_path / "ws")
