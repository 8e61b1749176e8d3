"""What the API shows and lets a user change: a job's status, and cancelling it."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from refapp import events
from refapp.attempt import FAILED, QUEUED, RUNNING
from refapp.db import NOW, engine, jobs
from refapp.jobstore import get_job

STATUS_FIELDS = ("id", "project", "file", "kind", "route", "state", "reason", "attempt",
                 "items_total", "items_done", "items_failed", "cancel_requested",
                 "created_at", "started_at", "finished_at")


def describe(job_id: str) -> dict[str, Any] | None:
    """The job as the status endpoint shows it (JSON-ready), or None."""
    with engine().connect() as conn:
        job = get_job(conn, job_id)
    if job is None:
        return None
    return {k: (job[k].isoformat() if hasattr(job[k], "isoformat") else job[k]) for k in STATUS_FIELDS}


def request_cancel(job_id: str) -> str | None:
    """Cancel a job: a queued one at once, a running one at its next check. None if no such job."""
    reason = "cancelled by user before it started"
    with engine().begin() as conn:
        stopped = conn.execute(
            sa.update(jobs).where(jobs.c.id == job_id, jobs.c.state == QUEUED)
            .values(state=FAILED, reason=reason, finished_at=NOW, updated_at=NOW)
            .returning(jobs.c.attempt)).first()
        if stopped is None:
            conn.execute(sa.update(jobs).where(jobs.c.id == job_id, jobs.c.state == RUNNING)
                         .values(cancel_requested=True, updated_at=NOW))
            job = get_job(conn, job_id)
    if stopped is not None:
        events.publish(events.job_event(job_id, FAILED, reason, stopped.attempt))
        return FAILED
    return None if job is None else job["state"]
