"""The outbox relay (``python -m tickets.relay``): publish what intake saved, then stamp it.

Publish first, stamp after: a crash between the two publishes the ticket
again, which the task's claim tolerates; the other order could lose it.
"""
from __future__ import annotations

import logging
import time

from sqlalchemy import text

from tickets import settings
from tickets.db import engine
from tickets.tasks import summarise_ticket

log = logging.getLogger("tickets.relay")

PENDING = text("""SELECT id, ticket_no, priority FROM ticket_outbox WHERE published_at IS NULL
                  ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED""")
STAMP = text("UPDATE ticket_outbox SET published_at = now() WHERE id = :id")


def relay_once() -> int:
    """Publish every pending outbox row; how many."""
    with engine().begin() as conn:
        rows = conn.execute(PENDING).all()
        for row in rows:
            summarise_ticket.apply_async(args=[row.ticket_no], priority=row.priority)
            conn.execute(STAMP, {"id": row.id})
    return len(rows)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log.info("relay ready")
    while True:
        try:
            if relay_once():
                continue
        except Exception:  # noqa: BLE001 - the database or broker is away; try again next round
            log.exception("relay round failed")
        time.sleep(settings.relay_every_s())


if __name__ == "__main__":
    main()
