"""Celery retries: each retry a task asks for, why, after how long, and what the task declares.

Celery's ``task_retry`` signal fires in the worker when a task raised
``Retry`` (``self.retry()``, ``autoretry_for``). Its ``reason`` carries the
exception that caused the retry and when the next run is due (seconds, or a
date); the task itself carries what the app declared (``max_retries``,
``default_retry_delay``, ``retry_backoff``). Each retry is recorded as a
``retry`` event of the running job, so the retry invariant can tell a
retried time limit (a soft time limit must end the task, not run it again)
and a retry sooner than declared.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from harness.instrument import _context, _events

TIME_LIMITS = ("SoftTimeLimitExceeded", "TimeLimitExceeded")


def _when_s(when: Any) -> float | None:
    """Seconds until the retry is due, from ``Retry.when`` (a number or an aware/naive datetime)."""
    if isinstance(when, (int, float)):
        return float(when)
    if isinstance(when, dt.datetime):
        now = dt.datetime.now(when.tzinfo) if when.tzinfo else dt.datetime.utcnow()
        return (when - now).total_seconds()
    return None


class RetryHooks:
    """The ``task_retry`` handler, bound to the run's folder."""

    def __init__(self, folder: str | None):
        self.folder = folder

    def install(self, celery: Any) -> None:
        from celery import signals

        signals.task_retry.connect(self.retried, weak=False)

    def retried(self, sender: Any = None, request: Any = None, reason: Any = None, **_: Any) -> None:
        job = _context.current()
        cause = getattr(reason, "exc", None) or reason
        _events.record(self.folder, "ok", "retry", job_id=job.job_id if job else None,
                       attempt=job.attempt if job else None, task=getattr(sender, "name", "?"),
                       task_id=getattr(request, "id", None), retries=int(getattr(request, "retries", 0) or 0),
                       cause=type(cause).__name__, due_in_s=_when_s(getattr(reason, "when", None)),
                       max_retries=getattr(sender, "max_retries", None),
                       default_retry_delay=getattr(sender, "default_retry_delay", None),
                       retry_backoff=getattr(sender, "retry_backoff", None))
