"""The job row's life: created with its outbox message, claimed, re-queued, finished.

Functions that own their transaction publish the status event after it
commits. Every write by a running attempt is fenced (``Attempt.owns``).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Connection

from refapp import budgets, events, settings
from refapp.attempt import (
    FAILED,
    NEEDS_HUMAN,
    QUEUED,
    RUNNING,
    TERMINAL,
    Attempt,
    AttemptAbandoned,
)
from refapp.db import NOW, engine, items, jobs, outbox
from refapp.failpoints import TASK_AFTER_STATUS_EVENT, TASK_BEFORE_FINAL_WRITE, TASK_CLAIM_READ, failpoint
from refapp.mutants import mutant

log = logging.getLogger(__name__)


def older_than(column: sa.ColumnElement[Any], seconds: float) -> sa.ColumnElement[bool]:
    """SQL: ``column`` lies more than ``seconds`` in the past."""
    return column < NOW - sa.func.make_interval(0, 0, 0, 0, 0, 0, seconds)


def insert_job(conn: Connection, *, job_id: str, project: str, file: str, user: str, kind: str,
               route: str, payloads: Sequence[str]) -> bool:
    """Create the job and its items; False when a job with this id already exists."""
    created = conn.execute(
        pg_insert(jobs)
        .values(id=job_id, project=project, file=file, submitted_by=user, kind=kind, route=route,
                items_total=len(payloads))
        .on_conflict_do_nothing(index_elements=[jobs.c.id])
        .returning(jobs.c.id)
    ).first()
    if created is None:
        return False
    conn.execute(sa.insert(items), [{"job_id": job_id, "idx": i, "payload": p} for i, p in enumerate(payloads)])
    return True


def add_outbox(conn: Connection, job_id: str, destination: str, dispatch: int) -> None:
    """Queue a message for the relay, inside the caller's transaction."""
    conn.execute(sa.insert(outbox).values(
        job_id=job_id, destination=destination, payload={"job_id": job_id, "dispatch": dispatch}))


def get_job(conn: Connection, job_id: str) -> sa.RowMapping | None:
    """The job row, or None."""
    return conn.execute(sa.select(jobs).where(jobs.c.id == job_id)).mappings().first()


# why-not prefix of a delivery that found the job running under a live attempt
IN_HAND = "in hand"


def claim(job_id: str, route: str) -> tuple[Attempt | None, str]:
    """Start a new attempt at ``job_id``: (attempt, "claimed") or (None, why not).

    A job may be taken when it is queued, or running with a stale heartbeat
    (its attempt died). A job already finished, or running under a live
    attempt, is left alone: this delivery is a duplicate. A job that has
    used up its attempts goes to ``needs_human``.

    The claim reads the row, then writes it only if it is still as read
    (the attempt number it saw): two deliveries of one job at once (two
    consumers, two workers) would otherwise both claim it under the same
    token, and fencing could not tell the two attempts apart.
    """
    stale_after = budgets.scaled("heartbeat_stale")
    stale = older_than(jobs.c.heartbeat_at, stale_after)
    conn = engine().connect()
    try:
        with conn.begin():
            row, why, event = _claim_in(conn, job_id, route, stale, stale_after)
    except BaseException:
        conn.close()
        raise
    if row is None:
        if not mutant("duplicate-claim-leaks-connection"):
            conn.close()
        # (the wrong shape: a refused claim returns early, leaving its connection to the garbage collector)
        if event:
            events.publish(event)
        return None, why
    conn.close()
    events.publish(events.job_event(job_id, RUNNING, row.reason, row.attempt))
    return Attempt(job_id=job_id, token=row.attempt, route=route), "claimed"


def _claim_in(conn: Connection, job_id: str, route: str, stale: sa.ColumnElement[bool],
              stale_after: float) -> tuple[sa.Row | None, str, dict[str, Any] | None]:
    """Inside the claim's transaction: (the claimed row, "claimed", None) or (None, why not, event to send)."""
    seen = conn.execute(sa.select(jobs.c.state, jobs.c.attempt, stale.label("stale"),
                                  older_than(jobs.c.updated_at, stale_after).label("idle"))
                        .where(jobs.c.id == job_id)).first()
    failpoint(TASK_CLAIM_READ, job_id=job_id, route=route)
    row = None if seen is None else _claim_as_read(conn, job_id, seen, stale)
    if row is None and mutant("consumer-not-idempotent"):
        row = _take(conn, job_id, sa.true())  # the wrong shape: nobody asks whether it is done or in hand
    elif row is None and mutant("claim-steals-live-job"):
        # the wrong shape: "a redelivered message means the last attempt died"
        row = _take(conn, job_id, jobs.c.state.in_((QUEUED, RUNNING)))
    if row is not None:
        return row, "claimed", None
    why, event = _why_not_claimed(conn, job_id, stale)
    if why == f"already {FAILED}" and mutant("redelivery-retries-failed-job"):
        # the wrong shape: "a job that only timed out deserves another go when its message comes back"
        row = _take(conn, job_id, sa.and_(jobs.c.state == FAILED, jobs.c.reason.startswith("timeout")))
        if row is not None:
            return row, "claimed", None
    return None, why, event


def _claim_as_read(conn: Connection, job_id: str, seen: sa.Row, stale: sa.ColumnElement[bool]) -> sa.Row | None:
    """Claim the job if it is takeable and still as ``seen`` read it; the new attempt's row, or None."""
    if seen.state == QUEUED or (seen.state == RUNNING and seen.stale):
        still = sa.or_(jobs.c.state == QUEUED, stale)  # and not beating again meanwhile
    elif seen.state == RUNNING and seen.idle and mutant("claim-judges-by-updated-at"):
        # the wrong shape: "abandoned" read from when the row last changed, not from its heartbeat
        still = older_than(jobs.c.updated_at, budgets.scaled("heartbeat_stale"))
    else:
        return None
    # a stale running job changes hands: the new attempt needs a token of its own (the wrong shape keeps
    # the old one, so the stale attempt, should it wake, still owns the job alongside the new one)
    keep_token = seen.state == RUNNING and mutant("takeover-keeps-token")
    as_read = sa.and_(jobs.c.attempt == seen.attempt, jobs.c.state == seen.state, still)
    row = _take(conn, job_id, as_read, keep_token=keep_token)
    if row is None and seen.attempt < settings.get().max_attempts and mutant("claim-read-then-write"):
        # the wrong shape: decided on the read, written by id, numbered from the read: a claim that came
        # in between is overwritten, and both attempts hold the same token
        row = conn.execute(sa.update(jobs).where(jobs.c.id == job_id)
                           .values(state=RUNNING, attempt=seen.attempt + 1, heartbeat_at=NOW, updated_at=NOW,
                                   started_at=sa.func.coalesce(jobs.c.started_at, NOW))
                           .returning(jobs.c.attempt, jobs.c.reason)).first()
    return row


def _take(conn: Connection, job_id: str, takeable: sa.ColumnElement[bool], *,
          keep_token: bool = False) -> sa.Row | None:
    """Start the job's next attempt if it is ``takeable`` and has attempts left: (attempt, reason)."""
    return conn.execute(
        sa.update(jobs)
        .where(jobs.c.id == job_id, takeable, jobs.c.attempt < settings.get().max_attempts)
        .values(state=RUNNING, attempt=jobs.c.attempt if keep_token else jobs.c.attempt + 1, heartbeat_at=NOW,
                updated_at=NOW, started_at=sa.func.coalesce(jobs.c.started_at, NOW))
        .returning(jobs.c.attempt, jobs.c.reason)
    ).first()


def _why_not_claimed(conn: Connection, job_id: str,
                     stale: sa.ColumnElement[bool]) -> tuple[str, dict[str, Any] | None]:
    job = conn.execute(
        sa.select(jobs, stale.label("stale")).where(jobs.c.id == job_id)).mappings().first()
    if job is None:
        return "unknown job", None
    if job["state"] in TERMINAL and not mutant("consumer-not-idempotent"):
        return f"already {job['state']}", None
    if job["state"] == RUNNING and not job["stale"]:
        return f"{IN_HAND}: attempt {job['attempt']} is running it", None
    if job["attempt"] < settings.get().max_attempts:
        return f"changed under us (state {job['state']})", None
    reason = (f"needs a person: {job['attempt']} attempts started and none finished "
              f"(last: {job['reason'] or 'no reason recorded'})")
    moved = conn.execute(
        sa.update(jobs)
        .where(jobs.c.id == job_id, jobs.c.attempt == job["attempt"], jobs.c.state == job["state"])
        .values(state=NEEDS_HUMAN, reason=reason, finished_at=NOW, updated_at=NOW)
    ).rowcount
    if not moved:
        return f"changed under us (state {job['state']})", None
    return "out of attempts", events.job_event(job_id, NEEDS_HUMAN, reason, job["attempt"])


def requeue(attempt: Attempt, reason: str) -> None:
    """Give the job back to the queue (its message will come again); the attempt ends."""
    with engine().begin() as conn:
        attempt.writes_as(conn)
        moved = attempt.update_owned(conn, state=QUEUED, reason=reason, updated_at=NOW)
    if not moved:
        raise AttemptAbandoned(f"attempt {attempt.token} of job {attempt.job_id} no longer owns it")
    attempt.cancel.set()
    events.publish(events.job_event(attempt.job_id, QUEUED, reason, attempt.token))


def finish(attempt: Attempt, state: str, reason: str | None) -> None:
    """Write the job's terminal state, then tell the world (in that order)."""
    event = events.job_event(attempt.job_id, state, reason, attempt.token)
    if mutant("event-before-commit"):
        events.publish(event)  # the wrong order: the screen may say done for a write that fails
        failpoint(TASK_AFTER_STATUS_EVENT, **attempt.context(state=state))
    failpoint(TASK_BEFORE_FINAL_WRITE, **attempt.context(state=state))
    with engine().begin() as conn:
        attempt.writes_as(conn)
        # fenced like every write: a dead attempt's verdict must not replace its successor's
        # (mutant unfenced-final-write: this write alone is retried without the fence once refused)
        moved = attempt.update_owned(conn, also="unfenced-final-write", state=state, reason=reason,
                                     finished_at=NOW, updated_at=NOW, **_item_counts())
    # only a write that landed is news (mutant event-for-refused-write: announced whatever the fence said)
    if not mutant("event-before-commit") and (moved or mutant("event-for-refused-write")):
        events.publish(event)
        failpoint(TASK_AFTER_STATUS_EVENT, **attempt.context(state=state))
    if not moved:
        raise AttemptAbandoned(f"attempt {attempt.token} of job {attempt.job_id} no longer owns it")


def _item_counts() -> dict[str, Any]:
    def count(state: str) -> sa.ScalarSelect[int]:
        return (sa.select(sa.func.count()).select_from(items)
                .where(items.c.job_id == jobs.c.id, items.c.state == state).scalar_subquery())
    return {"items_done": count("done"), "items_failed": count("failed")}


def record_item(attempt: Attempt, idx: int, *, ok: bool, result: str | None, reason: str | None,
                retryable: bool) -> None:
    """Save one item's outcome and the job's progress counters (fenced)."""
    with engine().begin() as conn:
        attempt.fence(conn)
        conn.execute(
            sa.update(items).where(items.c.job_id == attempt.job_id, items.c.idx == idx)
            .values(state="done" if ok else "failed", result=result, reason=reason,
                    retryable=retryable, attempt=attempt.token, updated_at=NOW))
        conn.execute(sa.update(jobs).where(jobs.c.id == attempt.job_id).values(**_item_counts()))


def in_hand(job_id: str) -> bool:
    """True while ``job_id`` runs under a live attempt (running, heartbeat fresh)."""
    fresh = sa.not_(older_than(jobs.c.heartbeat_at, budgets.scaled("heartbeat_stale")))
    with engine().connect() as conn:
        found = conn.execute(sa.select(jobs.c.id).where(jobs.c.id == job_id, jobs.c.state == RUNNING, fresh))
        return found.first() is not None


def give_up(job_id: str, after: int) -> bool | None:
    """Fail a job whose queue delivered it more often than the code allows, once it had ``after`` attempts.

    True when it was failed; None while it has attempts left (a delivery
    that found the job in hand used up a receive, not an attempt: this one
    runs the next attempt instead); False when it is not ours to fail (it
    finished, or runs under a live attempt). The reason keeps the label
    (``timeout`` / ``error``) of the last failure.
    """
    fresh_run = sa.and_(jobs.c.state == RUNNING,
                        sa.not_(older_than(jobs.c.heartbeat_at, budgets.scaled("heartbeat_stale"))))
    with engine().begin() as conn:
        job = get_job(conn, job_id)
        if job is None or job["state"] in TERMINAL:
            return False
        if job["attempt"] < after:
            return None
        last = job["reason"] or "no reason recorded"
        # the last attempt's label carries over: attempts that timed out end as a timeout
        label = "timeout" if last.startswith("timeout") and not mutant("give-up-relabels-timeout") else "error"
        ran = job["attempt"]
        reason = f"{label}: gave up after {ran} attempt{'' if ran == 1 else 's'} (last: {last})"
        moved = conn.execute(
            sa.update(jobs).where(jobs.c.id == job_id, jobs.c.state.not_in(TERMINAL), sa.not_(fresh_run))
            .values(state=FAILED, reason=reason, finished_at=NOW, updated_at=NOW)
        ).rowcount
    if moved:
        events.publish(events.job_event(job_id, FAILED, reason, job["attempt"]))
    return bool(moved)

