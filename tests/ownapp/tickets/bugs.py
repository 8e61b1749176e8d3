"""Known mistakes this app can be switched into, one at a time, for its own tests.

``TICKETS_BUG=<name>`` in a process's environment turns one on. Each is a
mistake that looks reasonable in review; the app is right without them.
"""
from __future__ import annotations

import os

BUGS = {
    "acks-early": "Celery acknowledges the task when a worker takes it: a killed worker loses the ticket",
    "fresh-key-per-retry": "the model call's idempotency key is new on every try: a retried ticket is billed twice",
    "no-model-timeout": "the model call has no deadline: a provider that never answers holds the worker",
    "dual-write": "the ticket is saved, then queued in a second step that can fail after the first committed",
    "sweep-no-savepoint": "the sweeper handles every stale ticket in one transaction: one bad ticket stops all",
    "swallows-soft-limit": "the model retry loop catches every exception, the soft time limit included",
}


def bug(name: str) -> bool:
    """True when this process runs with bug ``name`` switched on."""
    if name not in BUGS:
        raise KeyError(f"unknown bug {name!r}")
    return os.environ.get("TICKETS_BUG", "") == name
