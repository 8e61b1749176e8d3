"""What the API shows and lets a user change: a job's status, and cancelling it.

The status streams read the database here too: a stream's first state, and
the states it catches up on (``states_since``), are the database's, so a
status event that was lost on the way costs a stream a moment, never the
truth.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from refapp import events
from refapp.attempt import FAILED, QUEUED, RUNNING
from refapp.db import NOW, engine, jobs
from refapp.jobstore import get_job

STREAMS_POOL = "streams"  # the streams' reads do not take (or keep warm) the connections requests need
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


def _state_event(row: Any) -> dict[str, Any]:
    """A job row's state as a status event (``at``: when the row last changed)."""
    return {"job_id": row.id, "state": row.state, "reason": row.reason, "attempt": row.attempt,
            "at": row.updated_at.timestamp()}


def state_event(job_id: str) -> dict[str, Any] | None:
    """The job's state now, as a status event; None if there is no such job."""
    with engine(STREAMS_POOL).connect() as conn:
        row = conn.execute(sa.select(jobs.c.id, jobs.c.state, jobs.c.reason, jobs.c.attempt, jobs.c.updated_at)
                           .where(jobs.c.id == job_id)).first()
    return None if row is None else _state_event(row)


def states_since(since: float) -> list[dict[str, Any]]:
    """The state now of every job that changed at or after ``since`` (epoch seconds), oldest change first."""
    with engine(STREAMS_POOL).connect() as conn:
        rows = conn.execute(sa.select(jobs.c.id, jobs.c.state, jobs.c.reason, jobs.c.attempt, jobs.c.updated_at)
                            .where(jobs.c.updated_at >= sa.func.to_timestamp(since))
                            .order_by(jobs.c.updated_at)).all()
    return [_state_event(row) for row in rows]


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
