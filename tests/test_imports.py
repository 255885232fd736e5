"""Package layering: the model layer does not import the simulator, the simulator not the evolution;
sub-packages import only downward; no package imports itself through others; no import cycles; no
package folder over 15 modules (docs/ARCHITECTURE.md, "Package order").

The simulator registers itself as a provider (registry.PROVIDERS); prompt conventions both sides
need live in llm/messages/conventions.py. Every import statement counts, inside functions and
`TYPE_CHECKING` blocks too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import frames_cli

PACKAGE = Path(frames_cli.__file__).parent

#: A package cut into sub-packages → its sub-packages, lowest first: a module imports from its own
#: sub-package or from one listed before it, never after (docs/ARCHITECTURE.md, "Package order").
LAYERS: dict[str, tuple[str, ...]] = {
    "evolution": ("compare", "state", "propose", "round", "decide", "report", "run"),
    "ingest": ("cases", "keys", "rows", "tau2", "feedback"),
    "llm": ("messages", "store", "transport", "client"),
}

#: The most modules (`__init__.py` not counted) one folder of frames_cli holds.
MAX_MODULES = 15

#: The imports that still close cycles between the lower packages (importer, imported). Each is to
#: be cut; the test fails when one is gone, so the list only shrinks, and on any new cycle.
TANGLE = {
    ("frames_cli.evaluation.parallel", "frames_cli.sim.world"),
    ("frames_cli.evaluation.samples", "frames_cli.sim.world"),
}


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
    paths = module_paths()
    graph = {
        m: import_time_imports(ast.parse(p.read_text(encoding="utf-8")), set(paths)) - {m} for m, p in paths.items()
    }
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


def module_paths() -> dict[str, Path]:
    """Every module of frames_cli by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def all_imports(tree: ast.Module, known: set[str]) -> set[str]:
    """The frames_cli modules a module names in any import statement, in functions and under
    `TYPE_CHECKING` too: `from a.b import c` names the module a.b.c when there is one, else a.b."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            named = (f"{node.module}.{a.name}" for a in node.names)
            out.update(name if name in known else node.module for name in named)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out & known


def module_graph() -> dict[str, set[str]]:
    """module → the frames_cli modules it imports (any import statement)."""
    paths = module_paths()
    return {m: all_imports(ast.parse(p.read_text(encoding="utf-8")), set(paths)) - {m} for m, p in paths.items()}


def package_of(module: str, path: Path) -> str:
    """The package a module belongs to: its folder's package (a package's `__init__` is the package
    itself); a module directly under frames_cli/ (errors, tokens, …) stands for itself."""
    if path.name == "__init__.py" or path.parent == PACKAGE:
        return module
    return module.rpartition(".")[0]


def layer(module: str) -> tuple[str, int] | None:
    """(package, rank of its sub-package in LAYERS) of a module inside a cut package; None elsewhere."""
    parts = module.split(".")
    if len(parts) > 2 and parts[2] in LAYERS.get(parts[1], ()):
        return parts[1], LAYERS[parts[1]].index(parts[2])
    return None


def test_sub_packages_import_only_downward() -> None:
    wrong = []
    for parent, order in LAYERS.items():
        folder = PACKAGE / parent
        subs = sorted(p.name for p in folder.iterdir() if (p / "__init__.py").is_file())
        loose = sorted(p.name for p in folder.glob("*.py") if p.name != "__init__.py")
        if subs != sorted(order) or loose:
            wrong.append(f"{parent}/: sub-packages {subs} (declared {sorted(order)}), modules outside them {loose}")
    assert wrong == []
    upward = [
        f"{module} → {other}"
        for module, names in module_graph().items()
        for other in sorted(names)
        if (a := layer(module)) and (b := layer(other)) and a[0] == b[0] and b[1] > a[1]
    ]
    assert upward == []


def test_no_package_imports_itself_through_others() -> None:
    """Packages (each folder; each module directly under frames_cli/) with an edge where one of
    their modules imports another's: no cycle once the known TANGLE imports are left out."""
    paths = module_paths()
    graph = module_graph()
    present = {(m, o) for m, names in graph.items() for o in names}
    assert TANGLE - present == set(), "a TANGLE import is gone: take it off the list"
    edges: dict[str, dict[str, list[str]]] = {}
    for module, names in graph.items():
        a = package_of(module, paths[module])
        for other in names:
            b = package_of(other, paths[other])
            if a != b and (module, other) not in TANGLE:
                edges.setdefault(a, {}).setdefault(b, []).append(f"{module} → {other}")
    cycles = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(package: str, path: list[str]) -> None:
        state[package] = 1
        for other in sorted(edges.get(package, {})):
            if state.get(other) == 1:
                loop = [*path[path.index(other):], package, other]
                cycles.append([edges[a][b][0] for a, b in zip(loop, loop[1:])])
            elif other not in state:
                visit(other, [*path, package])
        state[package] = 2

    for package in sorted(edges):
        if package not in state:
            visit(package, [])
    assert cycles == []


def test_no_package_folder_holds_more_than_15_modules() -> None:
    counts = {
        str(folder.relative_to(PACKAGE)): sum(1 for p in folder.glob("*.py") if p.name != "__init__.py")
        for folder in [PACKAGE, *(p.parent for p in PACKAGE.rglob("__init__.py"))]
    }
    over = {name: n for name, n in counts.items() if n > MAX_MODULES}
    assert over == {}
