"""Capture every state change of the app's jobs, however short, with a Postgres trigger.

Polling the job table misses states that last less than the poll interval
(a job that is ``running`` for 200 µs between two commits). Instead the
harness installs a row trigger on the app's job table that copies every
change of state / reason / attempt into ``jobquake_state_log``, stamped with
``clock_timestamp()`` (the statement time: when the change was made, not
when its transaction started, which ``now()`` would give) and the
transaction id. When it reads, the harness adds each row's commit time,
``pg_xact_commit_timestamp(xmin)`` (Postgres runs with
``track_commit_timestamp = on``): when the change became visible to
others. A write late in a long transaction (after a slow paid call) is thus
dated after the call by both::

    conn.execute(install_sql(StateLogConfig(table="jobs", reason_column="error")))
    ...
    changes = read_state_log(conn, since_id=last_seen)   # StateChange rows
    last_seen = last_log_id(changes, default=last_seen)

Which attempt made a write: the app sets ``SET LOCAL jobquake.attempt = '<n>'``
in each transaction; the trigger logs it as ``writer_attempt`` (NULL when
unset), so a late write by an attempt that was already replaced shows as
such. For an app that does not, the instrumentation names the running task
run in the session setting ``jobquake.run`` (Django's connections do); a
write of such a run that raises the row's attempt is that run's claim,
remembered in ``jobquake_run_attempt``, and the run's later writes to the
job are logged as that attempt's. Which process made it: both logs keep the
session's ``application_name`` as ``writer`` (the instrumentation names each
app process's connections ``jobquake:<process>:<pid>``), so two processes
writing under one attempt number show as two writers.

Heartbeats: where config names the job table's heartbeat column
(``job_heartbeat_column``, a timestamp), the same trigger copies every
change of that column into ``jobquake_heartbeat_log`` (the job, the row's
attempt, the new heartbeat value, the statement time): the app's own
evidence that an attempt was alive, read by ``harness.evidence.heartbeats``.
A beat that changes nothing else costs one small insert.

Names come from the app's config, so every identifier is validated and
quoted (``psycopg.sql.Identifier``) before it enters generated SQL.
``read_state_log`` converts ``changed_at`` to monotonic time with the offset
that was in force when the row was written (``harness.history.clock``: the
wall clock may have been stepped since); ``wall`` keeps the database's time. A change's ``t`` is the statement time; ``committed_at``
(wall) and ``committed_t`` (monotonic) are None when the server does not
track commit times. ``harness.evidence.events.events_from_state_log``
turns the rows into ``job`` events (``harness.history.timing`` picks a time).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from psycopg import sql

from harness.errors import ConfigError
from harness.history.clock import wall_to_monotonic

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
DEFAULT_LOG_TABLE = "jobquake_state_log"
DEFAULT_HEARTBEAT_LOG_TABLE = "jobquake_heartbeat_log"
DEFAULT_RUN_TABLE = "jobquake_run_attempt"


def _check_identifier(key: str, value: str | None) -> None:
    if value is not None and not _IDENTIFIER.match(value):
        raise ConfigError(f"{key} must be a plain SQL identifier, got {value!r}", key=key)


@dataclass(frozen=True)
class StateLogConfig:
    """Where the app keeps its jobs; ``None`` for a column the app does not have.

    The attempt column must hold integers (the trigger casts it); any id
    type works (it is logged as text).
    """

    table: str = "jobs"
    id_column: str = "id"
    state_column: str = "state"
    reason_column: str | None = None
    attempt_column: str | None = None
    schema: str | None = None
    log_table: str = DEFAULT_LOG_TABLE
    heartbeat_column: str | None = None  # a timestamp column the app refreshes while an attempt lives
    heartbeat_log_table: str = DEFAULT_HEARTBEAT_LOG_TABLE
    run_table: str = DEFAULT_RUN_TABLE  # the attempt each task run claimed (session setting jobquake.run)

    def __post_init__(self) -> None:
        for key in ("table", "id_column", "state_column", "reason_column", "attempt_column", "schema",
                    "log_table", "heartbeat_column", "heartbeat_log_table", "run_table"):
            _check_identifier(f"state_log.{key}", getattr(self, key))

    def qualified(self, name: str) -> sql.Identifier:
        return sql.Identifier(self.schema, name) if self.schema else sql.Identifier(name)

    @property
    def function_name(self) -> str:
        return f"{self.log_table}_{self.table}_fn"[:63]

    @property
    def writer_function_name(self) -> str:
        return f"{self.log_table}_writer_attempt"[:63]

    @property
    def trigger_name(self) -> str:
        return f"{self.log_table}_{self.table}_trg"[:63]


def _column(row: str, column: str | None, cast: str) -> sql.Composable:
    if column is None:
        return sql.SQL("NULL")
    return sql.SQL("{}.{}::" + cast).format(sql.SQL(row), sql.Identifier(column))


_INSTALL = """
CREATE TABLE IF NOT EXISTS {log} (
    id bigserial PRIMARY KEY,
    job_id text NOT NULL,
    state text,
    reason text,
    attempt integer,
    op text NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT clock_timestamp(),  -- statement time, not now()
    txid bigint NOT NULL DEFAULT txid_current(),
    writer_attempt integer  -- the attempt that made the write, from the session setting jobquake.attempt
);
ALTER TABLE {log} ADD COLUMN IF NOT EXISTS writer_attempt integer;
-- which process wrote: the session's application_name (the instrumentation names each app process's)
ALTER TABLE {log} ADD COLUMN IF NOT EXISTS writer text DEFAULT current_setting('application_name', true);
CREATE TABLE IF NOT EXISTS {beats} (
    id bigserial PRIMARY KEY,
    job_id text NOT NULL,
    attempt integer,                                            -- the row's attempt when it beat
    beat_at timestamptz NOT NULL,                               -- the heartbeat column's new value
    changed_at timestamptz NOT NULL DEFAULT clock_timestamp()   -- statement time
);
ALTER TABLE {beats} ADD COLUMN IF NOT EXISTS writer text DEFAULT current_setting('application_name', true);
CREATE TABLE IF NOT EXISTS {runs} (
    run text NOT NULL,        -- a task run, as the instrumentation names it in the session setting jobquake.run
    job_id text NOT NULL,
    attempt integer NOT NULL, -- the attempt that run's claim set on the job's row
    PRIMARY KEY (run, job_id)
);
CREATE OR REPLACE FUNCTION {fn_writer}() RETURNS integer LANGUAGE sql STABLE AS $jobquake$
    -- '' once a SET LOCAL has ended, anything but digits from a confused app: no attempt, never an error
    SELECT CASE WHEN s ~ '^[0-9]{{1,9}}$' THEN s::integer END
    FROM (SELECT current_setting('jobquake.attempt', true) AS s) AS setting
$jobquake$;
CREATE OR REPLACE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $jobquake$
DECLARE
    writer integer := {fn_writer}();
    run_tag text := coalesce(current_setting('jobquake.run', true), '');
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO {log} (job_id, op) VALUES ({old_id}, TG_OP);
        RETURN NULL;
    END IF;
    -- a heartbeat: the column moved (a claim that sets it is the new attempt's first beat)
    IF {new_beat} IS NOT NULL AND (TG_OP = 'INSERT' OR {old_beat} IS DISTINCT FROM {new_beat}) THEN
        INSERT INTO {beats} (job_id, attempt, beat_at) VALUES ({new_id}, {new_attempt}, {new_beat});
    END IF;
    IF TG_OP = 'UPDATE' AND {old_state} IS NOT DISTINCT FROM {new_state}
       AND {old_reason} IS NOT DISTINCT FROM {new_reason}
       AND {old_attempt} IS NOT DISTINCT FROM {new_attempt} THEN
        RETURN NULL;
    END IF;
    -- an app that does not say its attempt: a task run that raised the row's attempt claimed that attempt,
    -- and writes as it from then on
    IF writer IS NULL AND run_tag <> '' AND {new_attempt} IS NOT NULL THEN
        IF TG_OP = 'INSERT' OR {old_attempt} IS DISTINCT FROM {new_attempt} THEN
            INSERT INTO {runs} (run, job_id, attempt) VALUES (run_tag, {new_id}, {new_attempt})
                ON CONFLICT (run, job_id) DO UPDATE SET attempt = EXCLUDED.attempt;
            writer := {new_attempt};
        ELSE
            SELECT r.attempt INTO writer FROM {runs} r WHERE r.run = run_tag AND r.job_id = {new_id};
        END IF;
    END IF;
    INSERT INTO {log} (job_id, state, reason, attempt, op, writer_attempt)
    VALUES ({new_id}, {new_state}, {new_reason}, {new_attempt}, TG_OP, writer);
    RETURN NULL;
END
$jobquake$;
DROP TRIGGER IF EXISTS {trg} ON {table};
CREATE TRIGGER {trg} AFTER INSERT OR UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {fn}();
"""


def install_sql(cfg: StateLogConfig) -> str:
    """SQL that creates the log table, the trigger function and the trigger (idempotent)."""
    parts: dict[str, sql.Composable] = {
        "log": cfg.qualified(cfg.log_table), "fn": cfg.qualified(cfg.function_name),
        "trg": sql.Identifier(cfg.trigger_name), "table": cfg.qualified(cfg.table),
        "fn_writer": cfg.qualified(cfg.writer_function_name),
        "beats": cfg.qualified(cfg.heartbeat_log_table), "runs": cfg.qualified(cfg.run_table),
    }
    for row in ("old", "new"):
        parts[f"{row}_id"] = _column(row.upper(), cfg.id_column, "text")
        parts[f"{row}_state"] = _column(row.upper(), cfg.state_column, "text")
        parts[f"{row}_reason"] = _column(row.upper(), cfg.reason_column, "text")
        parts[f"{row}_attempt"] = _column(row.upper(), cfg.attempt_column, "integer")
        parts[f"{row}_beat"] = _column(row.upper(), cfg.heartbeat_column, "timestamptz")
    return sql.SQL(_INSTALL).format(**parts).as_string(None)


def uninstall_sql(cfg: StateLogConfig) -> str:
    """SQL that removes the trigger, its functions and the log tables."""
    return sql.SQL("DROP TRIGGER IF EXISTS {trg} ON {table}; DROP FUNCTION IF EXISTS {fn}();"
                   " DROP FUNCTION IF EXISTS {fnw}(); DROP TABLE IF EXISTS {log};"
                   " DROP TABLE IF EXISTS {beats}; DROP TABLE IF EXISTS {runs};").format(
        fnw=cfg.qualified(cfg.writer_function_name), beats=cfg.qualified(cfg.heartbeat_log_table),
        runs=cfg.qualified(cfg.run_table),
        trg=sql.Identifier(cfg.trigger_name), table=cfg.qualified(cfg.table),
        fn=cfg.qualified(cfg.function_name), log=cfg.qualified(cfg.log_table)).as_string(None)


# pg_xact_commit_timestamp() raises when the server does not track commit times: ask first
_COMMITTED = ("CASE WHEN current_setting('track_commit_timestamp') = 'on'"
              " THEN extract(epoch FROM pg_xact_commit_timestamp(xmin))::float8 END")


def _select_sql(cfg: StateLogConfig) -> str:
    return sql.SQL(
        "SELECT id, job_id, state, reason, attempt, op, extract(epoch FROM changed_at)::float8, txid, "
        "writer_attempt, nullif(writer, ''), "
        + _COMMITTED + " FROM {log} WHERE id > {since} ORDER BY id").format(
        log=cfg.qualified(cfg.log_table), since=sql.Placeholder("since")).as_string(None)


def fetch_rows(conn: Any, query: str, params: dict[str, Any] | None = None) -> list[tuple]:
    """Run the query on a psycopg connection or a SQLAlchemy Connection."""
    if hasattr(conn, "exec_driver_sql"):  # SQLAlchemy: hand the SQL to its driver as is
        return [tuple(row) for row in conn.exec_driver_sql(query, params)]
    return list(conn.execute(query, params).fetchall())


@dataclass(frozen=True)
class StateChange:
    """One row of the state log: a job's state, reason or attempt changed, or its row was deleted."""

    log_id: int
    job_id: str
    op: str  # INSERT / UPDATE / DELETE
    t: float  # statement time, monotonic (this machine's clock)
    wall: float  # statement time, as the database dated it
    txid: int
    state: str | None = None
    reason: str | None = None
    attempt: int | None = None
    writer_attempt: int | None = None  # the attempt the writing transaction said it was (jobquake.attempt)
    writer: str | None = None  # the writing session's application_name: which process wrote
    committed_at: float | None = None  # commit time (wall), when the server tracks it
    committed_t: float | None = None  # the same, monotonic

    @property
    def deleted(self) -> bool:
        return self.op == "DELETE"


def read_state_log(conn: Any, since_id: int = 0, cfg: StateLogConfig | None = None) -> list[StateChange]:
    """Log rows after ``since_id``, in log order.

    ``conn``: a psycopg connection, or a SQLAlchemy Connection whose driver is
    psycopg. Pass the last row's ``log_id`` as the next ``since_id`` (see
    ``last_log_id``).
    """
    rows = fetch_rows(conn, _select_sql(cfg or StateLogConfig()), {"since": since_id})
    to_monotonic = wall_to_monotonic()
    changes = []
    for log_id, job_id, state, reason, attempt, op, epoch, txid, writer_attempt, writer, committed in rows:
        kept = {} if op == "DELETE" else {"state": state, "reason": reason, "attempt": attempt}
        changes.append(StateChange(
            log_id=log_id, job_id=job_id, op=op, t=to_monotonic(epoch), wall=epoch, txid=txid,
            writer_attempt=writer_attempt, writer=writer, committed_at=committed,
            committed_t=None if committed is None else to_monotonic(committed), **kept))
    return changes


def last_log_id(changes: list[StateChange], default: int = 0) -> int:
    """The highest ``log_id`` among ``changes`` (``default`` when there are none)."""
    return max((change.log_id for change in changes), default=default)
