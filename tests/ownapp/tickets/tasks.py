"""The Celery task: claim a ticket, summarise it, save the outcome (fenced by the try number).

A task may run twice (late acks, a relay that publishes again, the
sweeper): the claim only takes a ticket that is queued, or one whose claim
is older than any live task can be (``TICKETS_STALE_AFTER_S`` > the hard
limit); the final write only lands if this try still owns the ticket.
"""
from __future__ import annotations

import logging

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import text

from tickets import model, settings
from tickets.celery_app import app
from tickets.db import engine

log = logging.getLogger(__name__)

CLAIM = text("""
    UPDATE support_tickets SET status = 'summarising', tries = tries + 1, touched_at = now()
    WHERE ticket_no = :n AND (status = 'queued'
          OR (status = 'summarising' AND touched_at < now() - make_interval(secs => :stale)))
    RETURNING tries, subject, messages""")
FINISH = text("""
    UPDATE support_tickets SET status = :status, failure_note = :note, summary = :summary, touched_at = now()
    WHERE ticket_no = :n AND tries = :try AND status = 'summarising'""")


@app.task(name="tickets.summarise", soft_time_limit=settings.soft_limit_s(), time_limit=settings.hard_limit_s())
def summarise_ticket(ticket_no: int) -> None:
    """Summarise one ticket; it ends summarised, failed (``timeout:`` / ``error:``) or needs_agent."""
    claimed = _claim(ticket_no)
    if claimed is None:
        log.info("ticket %s: done already, or another worker has it", ticket_no)
        return
    try_no, subject, messages = claimed
    if try_no > settings.max_tries():
        _finish(ticket_no, try_no, "needs_agent", note=f"gave up after {try_no - 1} tries")
        return
    try:
        summary = model.summarise(ticket_no, subject, messages)
    except SoftTimeLimitExceeded:
        _finish(ticket_no, try_no, "failed", note="timeout: the task's time budget ran out")
        return
    except model.ModelTimeout as exc:
        _finish(ticket_no, try_no, "failed", note=f"timeout: {exc}")
        return
    except Exception as exc:  # noqa: BLE001 - any other failure is the ticket's outcome, said plainly
        _finish(ticket_no, try_no, "failed", note=f"error: {exc!r}")
        return
    _finish(ticket_no, try_no, "summarised", summary=summary)


def _claim(ticket_no: int) -> tuple[int, str, list[str]] | None:
    with engine().begin() as conn:
        row = conn.execute(CLAIM, {"n": ticket_no, "stale": settings.stale_after_s()}).first()
    return None if row is None else (row.tries, row.subject, list(row.messages))


def _finish(ticket_no: int, try_no: int, status: str, *, note: str | None = None,
            summary: str | None = None) -> None:
    with engine().begin() as conn:
        landed = conn.execute(FINISH, {"n": ticket_no, "try": try_no, "status": status, "note": note,
                                       "summary": summary}).rowcount
    if not landed:
        log.warning("ticket %s: try %s no longer owns it; %s not saved", ticket_no, try_no, status)
