"""The database: SQLAlchemy Core tables, ``create_schema`` and the process's engine.

Postgres is the source of truth for every job: queues and events only carry
news of it. The harness drops and recreates the database between tests, so
the engine pings a connection before using it (``pool_pre_ping``). The pool
is small and bounded on purpose: exhausting it must be as easy as in
production (``REFAPP_DB_POOL_SIZE`` / ``REFAPP_DB_MAX_OVERFLOW``).
"""
from __future__ import annotations

import logging
import os
import threading

import sqlalchemy as sa
from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import event
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Engine

from refapp import budgets, settings
from refapp.failpoints import register_resource

metadata = sa.MetaData()
NOW = sa.func.now()


def _timestamps() -> list[sa.Column]:
    return [sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
            sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW)]


jobs = sa.Table(
    "jobs", metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("project", sa.Text, nullable=False),
    sa.Column("file", sa.Text, nullable=False),
    sa.Column("submitted_by", sa.Text, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),       # documents | import
    sa.Column("route", sa.String(16), nullable=False),      # celery | sqs
    sa.Column("state", sa.String(16), nullable=False, server_default="queued"),
    sa.Column("reason", sa.Text),                           # what a person can act on
    sa.Column("attempt", sa.Integer, nullable=False, server_default="0"),  # fencing token
    sa.Column("dispatches", sa.Integer, nullable=False, server_default="1"),
    sa.Column("heartbeat_at", sa.DateTime(timezone=True)),
    sa.Column("items_total", sa.Integer, nullable=False, server_default="0"),
    sa.Column("items_done", sa.Integer, nullable=False, server_default="0"),
    sa.Column("items_failed", sa.Integer, nullable=False, server_default="0"),
    sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("started_at", sa.DateTime(timezone=True)),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
    *_timestamps(),
    sa.Index("jobs_state_heartbeat", "state", "heartbeat_at"),
    sa.Index("jobs_updated", "updated_at"),  # the status streams catch up on jobs changed since a moment
)

# One row per document (or CSV row) of a job, with its outcome.
items = sa.Table(
    "items", metadata,
    sa.Column("job_id", sa.String(36), sa.ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False, server_default="pending"),  # pending|done|failed
    sa.Column("result", sa.Text),
    sa.Column("reason", sa.Text),
    sa.Column("retryable", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("attempt", sa.Integer),  # the attempt that wrote the outcome
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
)

# What paid steps produced: the answer to "already done?" before paying again.
step_results = sa.Table(
    "step_results", metadata,
    sa.Column("job_id", sa.String(36), sa.ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("step", sa.Text, primary_key=True),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("output", sa.Text, nullable=False),
    sa.Column("call_id", sa.Text),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
)

# The transactional outbox: written with the job, sent by the relay.
outbox = sa.Table(
    "outbox", metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("job_id", sa.String(36), nullable=False),
    sa.Column("destination", sa.String(16), nullable=False),  # celery | sqs
    sa.Column("payload", sa.JSON, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    sa.Column("sent_at", sa.DateTime(timezone=True)),
    sa.Column("failed_at", sa.DateTime(timezone=True)),  # set aside: no send of it can ever work
    sa.Column("error", sa.Text),  # why, for whoever repairs it
    sa.Index("outbox_unsent", "id", postgresql_where=sa.text("sent_at IS NULL")),
)

# Output of CSV imports.
ledger_entries = sa.Table(
    "ledger_entries", metadata,
    sa.Column("job_id", sa.String(36), sa.ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("row_no", sa.Integer, primary_key=True),
    sa.Column("booked_on", sa.Date, nullable=False),
    sa.Column("amount", sa.Numeric(12, 2), nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("category", sa.Text, nullable=False),
)

invoices = sa.Table(
    "invoices", metadata,
    sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
    sa.Column("customer", sa.Text, nullable=False),
    sa.Column("amount", sa.Numeric(12, 2), nullable=False),
    sa.Column("due_on", sa.Date, nullable=False),
    sa.Column("status", sa.String(16), nullable=False, server_default="open"),  # open|overdue|paid
    sa.Column("overdue_at", sa.DateTime(timezone=True)),
)

sweep_runs = sa.Table(
    "sweep_runs", metadata,
    sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
    sa.Column("task", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False, server_default="running"),  # running|done|timed_out|failed
    sa.Column("reason", sa.Text),
    sa.Column("eligible", sa.Integer, nullable=False, server_default="0"),
    sa.Column("processed", sa.Integer, nullable=False, server_default="0"),
    sa.Column("failed", sa.Integer, nullable=False, server_default="0"),
    sa.Column("eligible_ids", sa.JSON, nullable=False, server_default="[]"),
    sa.Column("failed_ids", sa.JSON, nullable=False, server_default="[]"),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
)

# Static reference data: a few dozen rows, changed only by migrations.
categories = sa.Table(
    "categories", metadata,
    sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sa.Column("keywords", sa.Text, nullable=False, server_default=""),
)

# Bumped by a trigger whenever a reference table changes: caches compare it.
reference_versions = sa.Table(
    "reference_versions", metadata,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("version", sa.BigInteger, nullable=False, server_default="0"),
)

SEED_CATEGORIES = {
    "invoice": "invoice bill due payable",
    "receipt": "receipt paid purchase thank",
    "contract": "contract agreement party terms",
    "letter": "dear regards sincerely",
    "report": "report summary quarter analysis",
    "form": "form field signature application",
    "other": "",
}

_VERSION_TRIGGER = """
CREATE OR REPLACE FUNCTION refapp_bump_categories_version() RETURNS trigger AS $$
BEGIN
    UPDATE reference_versions SET version = version + 1 WHERE name = 'categories';
    RETURN NULL;
END $$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS categories_changed ON categories;
CREATE TRIGGER categories_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON categories
    FOR EACH STATEMENT EXECUTE FUNCTION refapp_bump_categories_version();
"""

# Wakes the relay (``outbox_wakeups``): delivered when the writing transaction commits.
OUTBOX_NOTIFY = """
CREATE OR REPLACE FUNCTION refapp_outbox_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('refapp_outbox', '');
    RETURN NULL;
END $$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS outbox_written ON outbox;
CREATE TRIGGER outbox_written AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION refapp_outbox_notify();
"""


def create_schema(url: str) -> None:
    """Create every table, the version and outbox triggers and the seed categories in the database at ``url``."""
    eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        metadata.create_all(eng)
        with eng.begin() as conn:
            conn.exec_driver_sql(_VERSION_TRIGGER)
            conn.exec_driver_sql(OUTBOX_NOTIFY)
            conn.execute(sa.text("INSERT INTO reference_versions (name) VALUES ('categories') "
                                 "ON CONFLICT DO NOTHING"))
            conn.execute(pg_insert(categories)
                         .values([{"name": n, "keywords": k} for n, k in SEED_CATEGORIES.items()])
                         .on_conflict_do_nothing())
    finally:
        eng.dispose()


_engines: dict[tuple[int, str, str], Engine] = {}
_lock = threading.Lock()


def _abort_behind(exc: BaseException | None) -> BaseException | None:
    """The soft time limit this error was raised while handling, if any."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, SoftTimeLimitExceeded):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _keep_the_abort(context: sa.engine.ExceptionContext) -> None:
    """A soft limit that interrupted a query stays the error, and the connection is dropped.

    Celery raises the soft limit from a signal handler, often inside a query.
    The connection still has that command in progress, so the rollback on the
    way out fails ("another command is already in progress") and that error
    would replace the abort: the job would end ``error:``, not ``timeout:``.
    """
    abort = _abort_behind(context.original_exception)
    if abort is not None:
        context.is_disconnect = True  # a command is still in progress on it: not reusable
        raise abort


def engine(pool: str = "main") -> Engine:
    """This process's engine (one per pid: a forked Celery child never shares its parent's pool).

    ``pool``: a separate pool for one kind of work (the API's status streams read through
    ``"streams"``), so that work cannot hold the connections requests need, nor keep them warm.
    """
    config = settings.get()
    key = (os.getpid(), config.database_url, pool)
    found = _engines.get(key)
    if found is not None:
        return found
    with _lock:
        if key not in _engines:
            timeout = (config.db_pool_timeout_s * config.time_scale if config.db_pool_timeout_s
                       else budgets.scaled("db_pool_wait"))
            created = sa.create_engine(
                config.database_url, pool_pre_ping=True, pool_size=config.db_pool_size,
                max_overflow=config.db_max_overflow, pool_timeout=timeout,
                connect_args={"connect_timeout": 5},
            )
            if pool == "main":
                register_resource("db_engine", created)
            event.listen(created, "handle_error", _keep_the_abort)
            # INFO (SQLAlchemy's default is WARN): a pre-ping that found the database gone
            # and the reconnect are then in the process's log, where a chaos run can see them
            logging.getLogger("sqlalchemy.pool").setLevel(logging.INFO)
            _engines[key] = created
        return _engines[key]


def dispose_engines() -> None:
    """Close every pooled connection of this process (tests, shutdown)."""
    with _lock:
        for key, eng in list(_engines.items()):
            if key[0] == os.getpid():
                eng.dispose()
            del _engines[key]
