"""Which of the harness's names a piece of code outside ``harness/`` uses that are not public.

Private is what Python's convention says: a module or name that starts with
``_`` (``harness._wait``, ``harness.faults._proc``, ``from harness.run import
_x``), an attribute ``._x`` reached from a harness module or from the run
(``jq.faults._kept``), and a name a module with ``__all__`` leaves out of it
(``from harness.run import Path``: run.py's import, not its API).
"""
from __future__ import annotations

import ast
import importlib
from typing import Any


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _outside_all(module: str, name: str) -> bool:
    """``name`` is not among ``module``'s ``__all__`` (and is no submodule of it)."""
    try:
        loaded: Any = importlib.import_module(module)
    except ImportError:
        return False  # a module that does not exist is another check's finding
    exported = getattr(loaded, "__all__", None)
    if exported is None or name in exported:
        return False
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return True
    return False


def _from_import(node: ast.ImportFrom) -> bool:
    module = node.module or ""
    if node.level or not (module == "harness" or module.startswith("harness.")):
        return False
    if any(_private(part) for part in module.split(".")):
        return True
    return any(_private(alias.name) or _outside_all(module, alias.name) for alias in node.names)


def _roots(tree: ast.Module) -> set[str]:
    """Names bound to harness modules or their members by imports, and ``jq`` (the run)."""
    bound = {"jq"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("harness"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness"):
            bound.update(a.asname or a.name for a in node.names)
    return bound


def _attribute_root(node: ast.Attribute) -> str | None:
    value: ast.expr = node.value
    while isinstance(value, ast.Attribute):
        value = value.value
    return value.id if isinstance(value, ast.Name) else None


def private_uses(source: str) -> list[str]:
    """Each private use in ``source``, as written (an import line, or ``root.x._y``)."""
    tree = ast.parse(source)
    roots = _roots(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [ast.unparse(node) for a in node.names
                      if a.name.startswith("harness") and any(_private(p) for p in a.name.split("."))]
        elif isinstance(node, ast.ImportFrom) and _from_import(node):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.Attribute) and _private(node.attr) and _attribute_root(node) in roots:
            found.append(ast.unparse(node))
    return found
