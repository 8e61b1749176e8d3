"""Checks of a setting's value that belong to the layer which knows what the value means.

``harness.config`` parses every setting, but a few values are written in
the language of a layer above it: ``call_key`` is a pattern the paid API
matches idempotency keys with, ``paidapi_prices`` its price table,
``job_id_from`` an expression the instrumentation resolves in each task
run. config may not import those layers (imports run down, and they sit
above it), so it asks this registry, which sits below all of them:

- the owner registers the check next to the code that gives the value its
  meaning: ``@checks_setting("call_key")`` on ``value -> problem | None``;
- config's validator calls ``problem("call_key", value)``.

``OWNERS`` names, per key, the module that registers its check: ``problem``
imports it on first use, so a value is never left unchecked because its
owner had not been imported yet, while importing ``harness.config`` alone
still loads neither layer. A key with a check must be listed there
(``tests/unit/test_setting_checks.py`` holds the two in step).
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

Check = Callable[[Any], "str | None"]

# key -> the module whose import registers that key's check
OWNERS: dict[str, str] = {
    "call_key": "harness.paidapi.attribution",
    "paidapi_prices": "harness.paidapi.pricing",
    "job_id_from": "harness.instrument.jobid",
}
_CHECKS: dict[str, Check] = {}


def checks_setting(key: str) -> Callable[[Check], Check]:
    """Register the decorated ``value -> problem | None`` as the check of setting ``key``."""
    if key not in OWNERS:
        raise KeyError(f"setting {key!r} has no owner in harness.setting_checks.OWNERS: add it there")

    def register(check: Check) -> Check:
        _CHECKS[key] = check
        return check
    return register


def problem(key: str, value: Any) -> str | None:
    """What is wrong with ``value`` for setting ``key`` according to its owner; None when nothing is."""
    if key not in _CHECKS:
        importlib.import_module(OWNERS[key])  # registers the check as it loads
    if key not in _CHECKS:
        raise LookupError(f"{OWNERS[key]} registers no check of setting {key!r}")
    return _CHECKS[key](value)
