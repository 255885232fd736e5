"""Package layering: the model layer does not import the simulator, the simulator not the evolution.

The simulator registers itself as a provider (registry.PROVIDERS); prompt conventions both sides
need live in llm/conventions.py. Every import statement counts, inside functions and
`TYPE_CHECKING` blocks too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import frames_cli

PACKAGE = Path(frames_cli.__file__).parent


def imported(folder: str) -> dict[str, set[str]]:
    """module path → the frames_cli modules it imports."""
    out: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
        out[str(path.relative_to(PACKAGE))] = {n for n in names if n.startswith("frames_cli")}
    return out


def test_llm_does_not_import_the_simulator() -> None:
    bad = {m: sorted(n for n in names if n.startswith("frames_cli.sim")) for m, names in imported("llm").items()}
    assert {m: n for m, n in bad.items() if n} == {}


def test_the_simulator_does_not_import_evolution() -> None:
    bad = {m: sorted(n for n in names if n.startswith("frames_cli.evolution")) for m, names in imported("sim").items()}
    assert {m: n for m, n in bad.items() if n} == {}
