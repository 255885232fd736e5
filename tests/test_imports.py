"""Package layering: the model layer does not import the simulator, the simulator not the evolution;
no import cycles.

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


def module_name(path: Path) -> str:
    """`frames_cli/evolution/run/loop.py` → `frames_cli.evolution.run.loop` (a package is its `__init__`)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_time_imports(tree: ast.Module, known: set[str]) -> set[str]:
    """The frames_cli modules a module imports when it is imported: statements at its top level
    (inside `if`/`try`/`with` too), not in functions and not under `if TYPE_CHECKING:`."""
    out: set[str] = set()
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
        elif isinstance(node, (ast.If, ast.With)):
            pending.extend([*node.body, *getattr(node, "orelse", [])])
        elif isinstance(node, ast.Try):
            pending.extend([*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from frames_cli.evolution import commit` imports the module frames_cli.evolution.round.commit.
            out.update({node.module, *(f"{node.module}.{a.name}" for a in node.names)})
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out & known


def test_no_import_cycles() -> None:
    """No two modules import each other, directly or through others, when they are imported.

    An import inside a function runs later and breaks no import; a package importing its own
    submodules is not a cycle unless a submodule imports the package back at its top level.
    """
    paths = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph = {m: import_time_imports(ast.parse(p.read_text(encoding="utf-8")), set(paths)) - {m} for m, p in paths.items()}
    cycles = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for other in sorted(graph[module]):
            if state.get(other) == 1:
                cycles.append([*path[path.index(other):], module, other])
            elif other not in state:
                visit(other, [*path, module])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    assert cycles == []
