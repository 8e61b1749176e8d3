"""Pending work the app's database declares: jobs not yet terminal, and the app's own queries.

A job's ``since`` is its last state change in the state log (when the
harness's trigger is installed), so a timeout says how long it has sat in
that state. ``pending_queries`` (config) are the app's other kinds of
pending work, each a query returning one number that must reach 0: unsent
outbox rows, a schedule table, a batch still open. A second column, when
the query has one, dates the oldest pending row.
"""
from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from harness.evidence import JobTable
from harness.pending.item import PendingWork

SHOWN = 5  # job ids named in a report line


def _exists(conn: psycopg.Connection, table: str) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()[0]


def _pending_jobs_sql(jobs: JobTable, with_log: bool) -> sql.Composed:
    since = (sql.SQL("(SELECT extract(epoch FROM max(l.changed_at))::float8 FROM {log} l "
                     "WHERE l.job_id = j.{id}::text)").format(
        log=sql.Identifier(jobs.state_log().log_table), id=sql.Identifier(jobs.id_column))
        if with_log else sql.NULL)
    return sql.SQL("SELECT j.{id}::text, j.{state}::text, {since} FROM {table} j "
                   "WHERE NOT (j.{state}::text = ANY(%s)) ORDER BY 3 NULLS LAST").format(
        id=sql.Identifier(jobs.id_column), state=sql.Identifier(jobs.state_column), since=since,
        table=sql.Identifier(jobs.table))


def pending_jobs(jobs: JobTable, conn: psycopg.Connection) -> list[PendingWork]:
    """One item for every job not in a terminal state (none when the table is absent).

    ``conn``: an autocommit connection to the app's database.
    """
    if not _exists(conn, jobs.table):
        return []
    with_log = _exists(conn, jobs.state_log().log_table)
    rows = conn.execute(_pending_jobs_sql(jobs, with_log), (list(jobs.terminal_states),)).fetchall()
    if not rows:
        return []
    oldest = min((r[2] for r in rows if r[2] is not None), default=None)
    shown = ", ".join(f"{job_id} ({state})" for job_id, state, _ in rows[:SHOWN])
    more = f" and {len(rows) - SHOWN} more" if len(rows) > SHOWN else ""
    return [PendingWork("job(s) not terminal", f"job table {jobs.table!r}", len(rows), since=oldest,
                        detail=shown + more, ids=tuple(r[0] for r in rows))]


def _since(value: Any) -> float | None:
    """A query's optional second column: the oldest pending row's time (timestamp or epoch)."""
    if value is None:
        return None
    return value.timestamp() if hasattr(value, "timestamp") else float(value)


def pending_queries(conn: psycopg.Connection, queries: tuple[str, ...]) -> list[PendingWork]:
    """One item per declared query whose answer is not 0 (``conn``: autocommit, the app's database)."""
    items = []
    for query in queries:
        row: Any = conn.execute(query).fetchone()
        count = int(row[0]) if row and row[0] is not None else 0
        if count:
            items.append(PendingWork("pending row(s)", f"query {query.strip()!r}", count,
                                     since=_since(row[1]) if len(row) > 1 else None))
    return items
