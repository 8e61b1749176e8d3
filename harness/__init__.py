"""jobquake: a chaos harness for background-job systems.

Importing ``harness`` is cheap on purpose: application code imports
``harness.failpoints`` in production paths, and that must not drag in pytest,
Celery or the service stack. Public names are loaded on first use.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "HarnessError": "harness.errors",
    "ConfigError": "harness.errors",
    "ServiceError": "harness.errors",
    "MissingBinaryError": "harness.errors",
    "FaultError": "harness.errors",
    "FaultWaitTimeout": "harness.errors",
    "SettleTimeout": "harness.errors",
    "Run": "harness.run",
    "WaitTimeout": "harness.errors",
    "wait_until": "harness._wait",
    "failpoint": "harness.failpoints",
    "Config": "harness.config",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
