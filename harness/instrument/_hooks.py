"""Run a function right after a module is first imported (a post-import hook).

The instrumentation patches libraries the app may import late, or never:
importing them eagerly from ``sitecustomize`` would slow every process and
change import order. A finder placed first on ``sys.meta_path`` lets the
normal finders locate the module, then wraps its loader so the hook runs
once the module's code has executed, before the importer gets it back (so
``from httpx import Client`` already sees the patched class).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from typing import Any, Callable

Hook = Callable[[Any], None]

_hooks: dict[str, list[Hook]] = {}
_lock = threading.RLock()
_finding = threading.local()  # names being looked up by us: do not recurse into ourselves


def when_imported(name: str, hook: Hook) -> None:
    """Call ``hook(module)`` once ``name`` is imported (at once if it already is)."""
    with _lock:
        module = sys.modules.get(name)
        if module is None:
            _hooks.setdefault(name, []).append(hook)
            _install()
            return
    hook(module)


def _install() -> None:
    if not any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PostImportFinder())


def _run_hooks(module: Any) -> None:
    with _lock:
        hooks = _hooks.pop(module.__name__, [])
    for hook in hooks:
        hook(module)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in _hooks or getattr(_finding, fullname, False):
            return None
        setattr(_finding, fullname, True)
        try:
            spec = importlib.util.find_spec(fullname)  # the other finders' answer
        finally:
            setattr(_finding, fullname, False)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _HookedLoader(spec.loader)
        return spec


class _HookedLoader(importlib.abc.Loader):
    def __init__(self, loader: Any):
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        # the module's own loader, for importlib.resources and friends
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _run_hooks(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)
