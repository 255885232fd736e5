"""Test modules import only public names, and never another test module or a conftest.

A test that imports `_name` pins the implementation instead of the behaviour: test it through the
public function, or make the name public (with a docstring) when it is part of the module's interface.
A test that imports another test module (`from .test_x import world`, `from tests.llm.test_y import
...`) or a conftest runs that module's code twice under two names (`.conftest` and
`tests.evolution.conftest` are two copies of one module) and re-imports fixtures that ruff then
reports as redefined (F811). Shared builders live in tests/helpers/, shared fixtures in a conftest.py.

Invariants:
1. No module under tests/ (helpers included) imports a name starting with `_` from any module,
   or imports a module whose last part is `conftest` or starts with `test_`.
2. The checker finds each kind of import it forbids (checked on sample sources), so (1) can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def forbidden_imports(source: str) -> list[str]:
    """The imports in `source` that a test module may not make, each as "line N: what"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
            private = [a.name for a in node.names if a.name.startswith("_")]
            if private:
                where = "." * node.level + modules[0]
                found.append(f"line {node.lineno}: private name {', '.join(private)} from {where}")
            if node.level and not node.module:  # `from . import test_x`
                modules = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        for module in modules:
            last = module.rsplit(".", 1)[-1]
            if last == "conftest" or last.startswith("test_"):
                found.append(f"line {node.lineno}: test module {module}")
    return found


@pytest.mark.parametrize("source, problem", [
    ("from .conftest import CONFIG", "test module conftest"),
    ("from tests.evolution.conftest import build_repo", "test module tests.evolution.conftest"),
    ("from evolution.conftest import build_repo", "test module evolution.conftest"),
    ("from tests.llm.test_model_client import executor_request", "test module tests.llm.test_model_client"),
    ("from .test_retrieval import POLICY", "test module test_retrieval"),
    ("from . import test_retrieval", "test module test_retrieval"),
    ("import tests.commands.test_publish", "test module tests.commands.test_publish"),
    ("from frames_cli.llm.transport.callpool import _rebuilt", "private name _rebuilt"),
    ("from helpers.review_world import RUN, _skill", "private name _skill"),
    ("def f():\n    from frames_cli.commands.evolve.evolve import _Progress", "private name _Progress"),
])
def test_the_checker_finds_each_forbidden_import(source: str, problem: str) -> None:
    (found,) = forbidden_imports(source)
    assert problem in found


@pytest.mark.parametrize("source", [
    "from __future__ import annotations",
    "from helpers.airline import CONFIG, build_repo",
    "from frames_cli.workspace.amendments import diagnoser_notice",
    "import frames_cli.evolution.report.review as review_module",
])
def test_the_checker_lets_public_imports_through(source: str) -> None:
    assert forbidden_imports(source) == []


def test_no_test_module_imports_a_private_name_or_another_test_module() -> None:
    problems = [f"{path.relative_to(TESTS.parent)} {problem}"
                for path in sorted(TESTS.rglob("*.py"))
                for problem in forbidden_imports(path.read_text(encoding="utf-8"))]
    assert problems == []
