"""The tables: tickets, their outbox, nothing else."""
from __future__ import annotations

from sqlalchemy import (JSON, Column, DateTime, ForeignKey, Integer, MetaData, String, Table, Text,
                        create_engine, func)

metadata = MetaData()

# status: received -> queued -> summarising -> summarised | failed | needs_agent
support_tickets = Table(
    "support_tickets", metadata,
    Column("ticket_no", Integer, primary_key=True),
    Column("customer", String(200), nullable=False),
    Column("subject", String(500), nullable=False),
    Column("channel", String(20), nullable=False, server_default="email"),
    Column("messages", JSON, nullable=False),
    Column("status", String(20), nullable=False, server_default="received"),
    Column("failure_note", Text),
    Column("tries", Integer, nullable=False, server_default="0"),
    Column("touched_at", DateTime(timezone=True), server_default=func.now()),
    Column("summary", Text),
)

# written with the ticket, in the same transaction; the relay publishes and stamps it
ticket_outbox = Table(
    "ticket_outbox", metadata,
    Column("id", Integer, primary_key=True),
    Column("ticket_no", Integer, ForeignKey("support_tickets.ticket_no"), nullable=False),
    Column("priority", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), server_default=func.now(), nullable=False),
    Column("published_at", DateTime(timezone=True)),
)

FINAL = ("summarised", "failed", "needs_agent")


def create_schema(url: str) -> None:
    """Create every table in the database at ``url``."""
    engine = create_engine(url)
    metadata.create_all(engine)
    engine.dispose()
