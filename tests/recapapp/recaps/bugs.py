"""Mistakes this app can be switched into, one at a time, for its own tests (``RECAPS_BUG=<name>``).

Each looks reasonable in review; the app is right without them.
"""
from __future__ import annotations

import os

BUGS = {
    "acks-early": "the summarise task is acknowledged when a worker takes it: a killed worker loses the recap",
    "key-per-attempt": "the model calls' idempotency keys name the attempt: a redelivered recap is billed again",
    "no-request-timeout": "the summary call to OpenRouter waits for as long as the provider takes",
    "refresh-before-publish": "the new row is read back after its commit, before the task is queued",
    "sweep-one-transaction": "the sweep handles every stale recap in one transaction: one bad recap stops all",
    "retry-swallows-soft-limit": "the call helper retries on any exception, the soft time limit included",
}


def bug(name: str) -> bool:
    """True when this process runs with bug ``name`` switched on."""
    if name not in BUGS:
        raise KeyError(f"unknown bug {name!r}")
    return os.environ.get("RECAPS_BUG", "") == name
