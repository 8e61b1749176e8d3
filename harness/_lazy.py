"""Names of a package loaded on first use (PEP 562), for packages whose import must stay cheap.

A package lists ``name -> defining module`` once for run time, imports the
same names under ``TYPE_CHECKING`` for type checkers, and spells ``__all__``
out; tests/quality/test_typing.py holds the three to one list.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: import the module that defines ``name``, keep the value."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next lookup is a plain attribute
        return value

    return __getattr__
