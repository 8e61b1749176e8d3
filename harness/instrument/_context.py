"""The job the current code works for: set around each Celery task run, read by the HTTP patches.

A context variable follows the task into asyncio code it runs; a process
global is the fallback for threads the task starts (a prefork child runs
one task at a time, so the global is unambiguous there).
"""
from __future__ import annotations

import contextvars
import fcntl
import hashlib
import os
import threading
from dataclasses import dataclass
from typing import Any

from harness.instrument._events import ATTEMPTS_DIR


@dataclass(frozen=True)
class JobContext:
    """The job a task run works for, and which attempt at it this run is."""

    job_id: str | None
    attempt: int | None
    task: str
    task_id: str
    retries: int = 0
    redelivered: bool = False

    def failpoint_context(self) -> dict[str, Any]:
        """What the framework failpoints carry (and ``match`` can select on)."""
        return {"job_id": self.job_id, "attempt": self.attempt, "task": self.task, "task_id": self.task_id}


_current: contextvars.ContextVar[JobContext | None] = contextvars.ContextVar("jobquake_job", default=None)
_process_current: JobContext | None = None
_guard = threading.local()


def current() -> JobContext | None:
    """The job of the running task, or None outside a task."""
    return _current.get() or _process_current


def enter(context: JobContext) -> None:
    global _process_current
    _current.set(context)
    _process_current = context


def leave() -> None:
    global _process_current
    _current.set(None)
    _process_current = None


def next_attempt(folder: str | None, task: str, job_id: str, fallback: int) -> int:
    """The number of this run of ``task`` for ``job_id``, counted across every process of the run.

    A retry, a redelivery after a killed worker and a rescue by resubmission
    are each a new attempt. The count lives in one small file per (task, job)
    under flock; ``fallback`` is used when there is no run folder.
    """
    if not folder:
        return fallback
    key = hashlib.sha256(f"{task}\0{job_id}".encode()).hexdigest()[:32]
    path = os.path.join(folder, ATTEMPTS_DIR, key)
    # 0660: where the folder is shared with the app's group (02770), the group counts here too;
    # where it is private (0700), nobody else reaches the file anyway
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o660)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = os.pread(fd, 32, 0).strip()
        attempt = (int(raw) if raw.isdigit() else 0) + 1
        os.pwrite(fd, f"{attempt:<31}\n".encode(), 0)
        return attempt
    finally:
        os.close(fd)


class quiet:
    """Within this block the instrumentation's own hooks do not fire (an action's pool checkouts)."""

    def __enter__(self) -> None:
        _guard.depth = getattr(_guard, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        _guard.depth -= 1


def inside_action() -> bool:
    return getattr(_guard, "depth", 0) > 0
