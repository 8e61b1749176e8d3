"""The sweeper (``python -m tickets.sweeper``): tickets whose worker died are sent again.

A ticket still ``summarising`` long after its claim (``TICKETS_STALE_AFTER_S``,
longer than the task's hard limit) has no live worker. Each such ticket is
handled in its own savepoint: queued again with a fresh outbox row, or
handed to a human agent after ``TICKETS_MAX_TRIES``. A ticket the sweeper
cannot handle goes to an agent with the reason; it does not stop the others.
"""
from __future__ import annotations

import logging
import time

from sqlalchemy import Connection, text

from tickets import settings
from tickets.bugs import bug
from tickets.db import engine
from tickets.intake import PRIORITY

log = logging.getLogger("tickets.sweeper")

STALE = text("""SELECT ticket_no, tries, channel FROM support_tickets
                WHERE status = 'summarising' AND touched_at < now() - make_interval(secs => :stale)
                ORDER BY ticket_no FOR UPDATE SKIP LOCKED""")
REQUEUE = text("UPDATE support_tickets SET status = 'queued', touched_at = now() WHERE ticket_no = :n")
OUTBOX = text("INSERT INTO ticket_outbox (ticket_no, priority) VALUES (:n, :priority)")
TO_AGENT = text("""UPDATE support_tickets SET status = 'needs_agent', failure_note = :note, touched_at = now()
                   WHERE ticket_no = :n""")


def sweep_once() -> tuple[int, int]:
    """One pass over the stale tickets: (rescued, failed)."""
    rescued = failed = 0
    with engine().begin() as conn:
        for row in conn.execute(STALE, {"stale": settings.stale_after_s()}).all():
            if bug("sweep-no-savepoint"):
                _rescue(conn, row)
                rescued += 1
                continue
            try:
                with conn.begin_nested():
                    _rescue(conn, row)
                rescued += 1
            except Exception as exc:  # noqa: BLE001 - one bad ticket goes to a person, the rest go on
                log.exception("ticket %s: cannot be sent again", row.ticket_no)
                with conn.begin_nested():
                    conn.execute(TO_AGENT, {"n": row.ticket_no, "note": f"sweeper: cannot send again: {exc!r}"})
                failed += 1
    if failed:
        log.warning("sweep: rescued=%d failed=%d", rescued, failed)
    return rescued, failed


def _rescue(conn: Connection, row) -> None:
    if row.tries >= settings.max_tries():
        conn.execute(TO_AGENT, {"n": row.ticket_no, "note": f"gave up after {row.tries} tries"})
        return
    conn.execute(REQUEUE, {"n": row.ticket_no})
    conn.execute(OUTBOX, {"n": row.ticket_no, "priority": PRIORITY[row.channel]})


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log.info("sweeper ready")
    while True:
        try:
            sweep_once()
        except Exception:  # noqa: BLE001 - try again next pass
            log.exception("sweep pass failed")
        time.sleep(settings.sweep_every_s())


if __name__ == "__main__":
    main()
