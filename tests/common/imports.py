"""The import graph of the code, read from the source with ``ast``: what the layer test and the
architecture page are drawn from.

Every ``import`` counts: at the top of a module, inside a function, under
``TYPE_CHECKING``. ``from a.b import c`` is an import of the module ``a.b.c``
when there is one, else of ``a.b`` (as Python resolves it).
"""
from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def modules(package: str) -> dict[str, Path]:
    """Dotted name -> file, for every module of ``package`` (a folder at the repository root)."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(path: Path, name: str, known: set[str] | dict[str, Path]) -> set[str]:
    """The modules of ``known`` that the module ``name`` (file ``path``) imports, in any place."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([node.module] if node.module else []))
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
    return {module for module in found if module in known and module != name}


def module_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    known = modules(package)
    return {name: imported(path, name, known) for name, path in known.items()}


def unit_of(module: str) -> str:
    """The unit of a harness module: its top-level package or module."""
    return module.split(".")[1]


def units() -> set[str]:
    return {unit_of(name) for name in modules("harness") if name != "harness"}


def unit_graph() -> dict[str, set[str]]:
    """Unit -> the other units it imports (``harness/__init__.py``, which loads names lazily, left out)."""
    graph: dict[str, set[str]] = {}
    for module, targets in module_graph("harness").items():
        if module == "harness":
            continue
        unit = unit_of(module)
        graph.setdefault(unit, set()).update(unit_of(t) for t in targets if t != "harness" and unit_of(t) != unit)
    return graph


def edges_between(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((source, target) for source, targets in graph.items() for target in targets)


def layer_violations(graph: dict[str, set[str]], layer_of: dict[str, int]) -> list[str]:
    """Each import of a unit of the importer's own layer or above, as a sentence."""
    wrong = []
    for source, target in edges_between(graph):
        if layer_of[target] >= layer_of[source]:
            where = "its own" if layer_of[target] == layer_of[source] else f"above its own {layer_of[source]}"
            wrong.append(f"{source} imports {target} (layer {layer_of[target]}, {where})")
    return wrong


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules in order), None when there is none."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return list(exc.args[1])
    return None
