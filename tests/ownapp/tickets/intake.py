"""A new ticket: saved with its outbox row in one transaction, so it cannot be saved and never sent."""
from __future__ import annotations

import logging

from sqlalchemy import insert, update

from tickets.bugs import bug
from tickets.db import engine
from tickets.schema import support_tickets, ticket_outbox

log = logging.getLogger(__name__)

# how soon each channel's customers expect an answer (Celery priority, higher first)
PRIORITY = {"chat": 9, "phone": 7, "email": 5}


def open_ticket(customer: str, subject: str, messages: list[str], channel: str = "email") -> int:
    """Save a new ticket and queue it for a summary; its number."""
    if channel not in PRIORITY:
        raise ValueError(f"unknown channel {channel!r}; known: {', '.join(PRIORITY)}")
    if bug("dual-write"):
        return _open_then_enqueue(customer, subject, messages, channel)
    with engine().begin() as conn:
        ticket_no = conn.execute(insert(support_tickets).values(
            customer=customer, subject=subject, messages=messages, channel=channel, status="queued")
            .returning(support_tickets.c.ticket_no)).scalar_one()
        conn.execute(insert(ticket_outbox).values(ticket_no=ticket_no, priority=PRIORITY[channel]))
    return ticket_no


def _open_then_enqueue(customer: str, subject: str, messages: list[str], channel: str) -> int:
    """The bug: two writes, the second one after the first committed."""
    from tickets.tasks import summarise_ticket

    with engine().begin() as conn:
        ticket_no = conn.execute(insert(support_tickets).values(
            customer=customer, subject=subject, messages=messages, channel=channel)
            .returning(support_tickets.c.ticket_no)).scalar_one()
    try:
        with engine().begin() as conn:
            conn.execute(update(support_tickets).where(support_tickets.c.ticket_no == ticket_no)
                         .values(status="queued"))
        summarise_ticket.apply_async(args=[ticket_no], priority=PRIORITY[channel])
    except Exception:  # noqa: BLE001 - "the ticket is saved; the queue will catch up"
        log.exception("ticket %s saved but not queued", ticket_no)
    return ticket_no
