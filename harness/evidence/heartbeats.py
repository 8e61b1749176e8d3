"""Read the heartbeats the state-log trigger copied: the app's own evidence that an attempt lived.

Where config names the job table's heartbeat column, every change of it is
a row of ``jobquake_heartbeat_log`` (see ``harness.evidence.state_log``):
the job, the row's attempt at that moment (the heartbeat belongs to the
attempt that holds the row), the column's new value and the statement
time. A claim that sets the column is the new attempt's first beat::

    beats = read_heartbeats(conn, cfg)   # Beat rows, in log order

Times are converted to monotonic seconds with the offset in force when the
beat was written (``harness.history.clock``), as the state log does, so a
beat compares directly with the changes of the state log.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import sql

from harness.evidence.state_log import StateLogConfig, fetch_rows
from harness.history.clock import wall_to_monotonic


@dataclass(frozen=True)
class Beat:
    """The heartbeat column of ``job_id`` moved to ``beat_wall`` while the row was at ``attempt``."""

    log_id: int
    job_id: str
    attempt: int | None
    beat_t: float  # the column's new value, monotonic
    beat_wall: float  # the same, as the database dated it
    t: float  # statement time, monotonic
    wall: float  # statement time, as the database dated it
    writer: str | None = None  # the writing session's application_name: which process beat


def _select_sql(cfg: StateLogConfig) -> str:
    return sql.SQL(
        "SELECT id, job_id, attempt, extract(epoch FROM beat_at)::float8, extract(epoch FROM changed_at)::float8, "
        "nullif(writer, '') FROM {beats} WHERE id > {since} ORDER BY id").format(
        beats=cfg.qualified(cfg.heartbeat_log_table), since=sql.Placeholder("since")).as_string(None)


def read_heartbeats(conn: Any, cfg: StateLogConfig, since_id: int = 0) -> list[Beat]:
    """Logged beats after ``since_id``, in log order (``conn``: psycopg, or SQLAlchemy with psycopg underneath)."""
    rows = fetch_rows(conn, _select_sql(cfg), {"since": since_id})
    to_monotonic = wall_to_monotonic()
    return [Beat(log_id=log_id, job_id=job_id, attempt=attempt, beat_t=to_monotonic(beat), beat_wall=beat,
                 t=to_monotonic(changed), wall=changed, writer=writer)
            for log_id, job_id, attempt, beat, changed, writer in rows]
