"""jobquake: a chaos harness for background-job systems.

Importing ``harness`` is cheap on purpose: application code imports
``harness.failpoints`` in production paths, and that must not drag in pytest,
Celery or the service stack. Public names are loaded on first use; a type
checker reads them from the imports below (tests/quality/test_typing.py keeps
the lists one).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from harness._lazy import lazy_exports

if TYPE_CHECKING:
    from harness._wait import wait_until
    from harness.config import Config
    from harness.errors import (
        ConfigError, FaultError, FaultWaitTimeout, HarnessError, MissingBinaryError, ServiceError, SettleTimeout,
        WaitTimeout,
    )
    from harness.failpoints import failpoint
    from harness.run import Run

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

__all__ = [
    "Config", "ConfigError", "FaultError", "FaultWaitTimeout", "HarnessError", "MissingBinaryError", "Run",
    "ServiceError", "SettleTimeout", "WaitTimeout", "__version__", "failpoint", "wait_until",
]

if not TYPE_CHECKING:  # to a type checker a misspelt ``harness.X`` must stay an error, not Any
    __getattr__ = lazy_exports(__name__, _EXPORTS)
