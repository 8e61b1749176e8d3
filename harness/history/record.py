"""``Record``: what a scenario saw the app do, written in the history's vocabulary (``jq.record``).

The checkers read submissions, status events and worker lifecycle from
the history; ``Record`` is the one way to write them, so no caller spells
a source, type or event name by hand::

    jq.record.submitting(project="p", file="a.pdf")         # the request is about to go
    jq.record.submission(job_id, status=202)                # accepted: no_lost_submission follows it
    jq.record.submission(None, accepted=False, error="503") # refused
    jq.record.submission(None, accepted=None, error=repr(exc))  # the answer was lost
    jq.record.status_event(job_id, "done", attempt=1)       # a status event users were sent
    jq.record.worker("killed", "worker1", pid=81)           # worker lifecycle
    jq.record.expected(paid_calls=0)                        # what the scenario declared it makes
"""
from __future__ import annotations

from typing import Any

from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.recorder import Recorder

__all__ = ["Record"]


class Record:
    """Typed writers over one run's ``Recorder``; each returns the event it appended."""

    def __init__(self, history: Recorder):
        self.history = history

    def submitting(self, **data: Any) -> Event:
        """A submission is about to be sent (``data``: what identifies it, e.g. project and file)."""
        return self.history.record(v.SUBMIT, "invoke", v.SUBMIT, data=data)

    def submission(self, job_id: str | None, accepted: bool | None = True, *, error: str | None = None,
                   **data: Any) -> Event:
        """The app's answer to a submission.

        ``accepted=True``: it took the job ``job_id`` (required); ``False``:
        it refused (``error``: why, e.g. the status); ``None``: the answer was
        lost (``error``: the exception), so it may or may not have taken it.
        """
        if accepted is True and job_id is None:
            raise ValueError("an accepted submission names its job_id")
        if accepted is not True and error is None:
            raise ValueError("a refused or lost submission says why: error=...")
        type_ = "ok" if accepted is True else "fail" if accepted is False else "info"
        payload = {**data, **({} if error is None else {"error": error})}
        if job_id is not None:
            payload["job_id"] = str(job_id)
        return self.history.record(v.SUBMIT, type_, v.SUBMIT, job_id=job_id, data=payload)

    def status_event(self, job_id: str | None, state: str | None, *, attempt: int | None = None,
                     **data: Any) -> Event:
        """A status event the app sent to users (e.g. over SSE) saying ``job_id`` is now ``state``."""
        return self.history.record(v.EVENT, "ok", v.STATUS, job_id=job_id, attempt=attempt,
                                   data={"state": state, **data})

    def status_stream_lost(self, **data: Any) -> Event:
        """The stream of status events broke: events after this moment were not seen."""
        return self.history.record(v.EVENT, "info", v.STREAM, data={"lost": True, **data})

    def worker(self, what: v.WorkerLifecycle, worker: str, *, pid: int | None = None, **data: Any) -> Event:
        """A worker's lifecycle event: ``start``, ``ready``, ``killed`` or ``exited``."""
        if what not in v.WORKER_LIFECYCLE:
            raise ValueError(f"worker lifecycle event {what!r}; known: {', '.join(v.WORKER_LIFECYCLE)}")
        return self.history.record(v.WORKER, "ok", what, data={"worker": worker, "pid": pid, **data})

    def expected(self, **counts: int) -> Event:
        """What the scenario declared it makes (``paid_calls=0``, ``jobs=0``), for the checkers' evidence needs."""
        return self.history.record(v.HARNESS, "ok", v.EXPECT, data=counts)
