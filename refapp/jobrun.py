"""One attempt at a job, start to finish, shared by the Celery task and the SQS consumer.

``run_attempt`` always leaves the job somewhere a person can see: finished
(``done`` / ``failed``), given back to the queue for another attempt (SQS
path, when attempts remain), or untouched because this attempt lost the
job to another one (its writes are fenced out).
"""
from __future__ import annotations

import logging

import sqlalchemy as sa
from celery.exceptions import SoftTimeLimitExceeded

from refapp import documents, imports, jobstore
from refapp.attempt import DONE, FAILED, Attempt, AttemptAbandoned, Heartbeat, JobCancelled
from refapp.batch import Item, Process, finish_timed_out, run_batch
from refapp.db import engine, items, jobs
from refapp.failpoints import TASK_CLAIMED, failpoint

log = logging.getLogger(__name__)

KINDS: dict[str, tuple[Process, str]] = {
    "documents": (documents.process_document, "documents"),
    "import": (imports.process_row, "rows"),
}


def run_on_celery(job_id: str) -> str:
    """The Celery task's body: claim, heartbeat, run. Item failures are final on this path."""
    attempt, why = jobstore.claim(job_id, route="celery")
    if attempt is None:
        log.info("job %s: nothing to do (%s)", job_id, why)
        return why
    with Heartbeat(attempt):
        return run_attempt(attempt, may_retry=False)


def run_attempt(attempt: Attempt, *, may_retry: bool) -> str:
    """Run a claimed attempt; returns what became of the job ("done", "failed", "retry", "abandoned")."""
    noun = "items"
    try:
        batch, process, noun = _load(attempt)
        failpoint(TASK_CLAIMED, **attempt.context())
        run_batch(attempt, batch, process, noun=noun)
        return _conclude(attempt, may_retry=may_retry)
    except SoftTimeLimitExceeded:
        finish_timed_out(attempt, _finished_items(attempt.job_id), _total_items(attempt.job_id), noun)
        raise
    except AttemptAbandoned as exc:
        log.warning("job %s: %s; leaving it to its new owner", attempt.job_id, exc)
        return "abandoned"
    except JobCancelled:
        finished, total = _finished_items(attempt.job_id), _total_items(attempt.job_id)
        return _end(attempt, FAILED, f"cancelled by user after {finished} of {total} {noun}")
    except Exception as exc:  # noqa: BLE001 - whatever broke, the job must not stay "running"
        log.exception("job %s: attempt %s broke", attempt.job_id, attempt.token)
        reason = f"error: {type(exc).__name__}: {exc}"
        if may_retry:
            return _requeue(attempt, f"{reason} on attempt {attempt.token}")
        return _end(attempt, FAILED, reason)


def _load(attempt: Attempt) -> tuple[list[Item], Process, str]:
    with engine().connect() as conn:
        job = jobstore.get_job(conn, attempt.job_id)
        # every item, also those an earlier attempt finished: each step asks "already done?" itself
        rows = conn.execute(sa.select(items.c.idx, items.c.payload)
                            .where(items.c.job_id == attempt.job_id).order_by(items.c.idx)).all()
    if job is None:
        raise AttemptAbandoned(f"job {attempt.job_id} is gone")
    process, noun = KINDS[job["kind"]]
    return [Item(r.idx, r.payload) for r in rows], process, noun


def _conclude(attempt: Attempt, *, may_retry: bool) -> str:
    """Finish the job from its items' outcomes, or give it back for another attempt."""
    with engine().connect() as conn:
        job = jobstore.get_job(conn, attempt.job_id)
        failed = conn.execute(sa.select(items.c.reason, items.c.retryable)
                              .where(items.c.job_id == attempt.job_id, items.c.state == "failed")
                              .order_by(items.c.idx)).all()
    if not failed:
        return _end(attempt, DONE, None)
    _, noun = KINDS[job["kind"]]
    summary = f"{failed[0].reason} ({len(failed)} of {job['items_total']} {noun} failed)"
    if may_retry and any(f.retryable for f in failed):
        return _requeue(attempt, f"{summary} on attempt {attempt.token}")
    return _end(attempt, FAILED, summary)


def _end(attempt: Attempt, state: str, reason: str | None) -> str:
    try:
        jobstore.finish(attempt, state, reason)
    except AttemptAbandoned as exc:
        log.warning("job %s: %s", attempt.job_id, exc)
        return "abandoned"
    return state


def _requeue(attempt: Attempt, reason: str) -> str:
    try:
        jobstore.requeue(attempt, reason)
    except AttemptAbandoned as exc:
        log.warning("job %s: %s", attempt.job_id, exc)
        return "abandoned"
    return "retry"


def _finished_items(job_id: str) -> int:
    with engine().connect() as conn:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(items)
                               .where(items.c.job_id == job_id, items.c.state != "pending")) or 0)


def _total_items(job_id: str) -> int:
    with engine().connect() as conn:
        return int(conn.scalar(sa.select(jobs.c.items_total).where(jobs.c.id == job_id)) or 0)
