"""The app's job table, as config names it: checked, snapshotted, counted, and its state log read.

The job table is the app's; the harness only reads it, apart from the
state-log trigger ``prepare_template`` installs once in the template
database (so every per-test copy records every state change, however short).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

import psycopg
from psycopg import sql

from harness.config import Config
from harness.errors import ConfigError
from harness.evidence.heartbeats import Beat, read_heartbeats
from harness.evidence.state_log import StateChange, StateLogConfig, install_sql, read_state_log
from harness.history.snapshot import JobRow, Snapshot

log = logging.getLogger("harness.evidence")
# the columns a job table may lack: left at its default, such a key names a column the app may not
# have (``attempt``, ``heartbeat_at``), and is simply not read; the id and the state it must have
OPTIONAL_COLUMNS = {"job_reason_column": "reason_column", "job_attempt_column": "attempt_column",
                    "job_heartbeat_column": "heartbeat_column", "job_updated_column": "updated_column"}


@dataclass(frozen=True)
class JobTable:
    """The app's job table as config describes it."""

    table: str
    id_column: str
    state_column: str
    reason_column: str | None
    attempt_column: str | None
    heartbeat_column: str | None
    terminal_states: tuple[str, ...]
    updated_column: str | None = None

    @classmethod
    def from_config(cls, config: Config) -> "JobTable":
        return cls(config.job_table, config.job_id_column, config.job_state_column,
                   config.job_reason_column or None, config.job_attempt_column or None,
                   config.job_heartbeat_column or None, tuple(config.terminal_states),
                   getattr(config, "job_updated_column", "") or None)

    def columns_by_key(self) -> dict[str, str]:
        """Config key -> the column it names, for every column config names."""
        named = {"job_id_column": self.id_column, "job_state_column": self.state_column,
                 "job_reason_column": self.reason_column, "job_attempt_column": self.attempt_column,
                 "job_heartbeat_column": self.heartbeat_column, "job_updated_column": self.updated_column}
        return {key: column for key, column in named.items() if column}

    def without(self, keys: frozenset[str]) -> "JobTable":
        """This table with the optional columns of config ``keys`` not read."""
        return replace(self, **{OPTIONAL_COLUMNS[key]: None for key in keys})

    def check(self, dsn: str, defaults: frozenset[str] = frozenset()) -> frozenset[str]:
        """ConfigError naming the key, the table and its real columns, when config names a
        table or column the app's schema does not have (called right after the schema is made);
        the keys of ``defaults`` (optional columns left at their default) that the table lacks are
        returned instead, as columns not to read."""
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            exists = self._exists(conn, self.table)
            columns = [r[0] for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0 "
                "AND NOT attisdropped ORDER BY attnum", (self.table,)).fetchall()] if exists else []
            tables = [] if exists else [r[0] for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1").fetchall()]
        if not exists:
            raise ConfigError(f"job_table = {self.table!r}: the schema has no such table; its tables: "
                              f"{', '.join(tables) or '(none)'}", key="job_table")
        absent = set()
        for key, column in self.columns_by_key().items():
            if column not in columns and key in defaults and key in OPTIONAL_COLUMNS:
                absent.add(key)
            elif column not in columns:
                raise ConfigError(f"{key} = {column!r}: table {self.table!r} has no such column; its columns: "
                                  f"{', '.join(columns)}", key=key)
        self._check_states(dsn)
        return frozenset(absent)

    def _check_states(self, dsn: str) -> None:
        """Where the state column is an enum, every terminal state must be one of its labels."""
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            labels = [r[0] for r in conn.execute(
                "SELECT e.enumlabel FROM pg_attribute a JOIN pg_enum e ON e.enumtypid = a.atttypid "
                "WHERE a.attrelid = to_regclass(%s) AND a.attname = %s ORDER BY e.enumsortorder",
                (self.table, self.state_column)).fetchall()]
        unknown = [state for state in self.terminal_states if labels and state not in labels]
        if unknown:
            raise ConfigError(f"terminal_states: {', '.join(map(repr, unknown))} not a value of "
                              f"{self.table}.{self.state_column}; its values: {', '.join(labels)}",
                              key="terminal_states")

    def state_log(self, heartbeats: bool = True) -> StateLogConfig:
        return StateLogConfig(table=self.table, id_column=self.id_column, state_column=self.state_column,
                              reason_column=self.reason_column, attempt_column=self.attempt_column,
                              heartbeat_column=self.heartbeat_column if heartbeats else None)

    def install_state_log(self, dsn: str) -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            # beats are logged only from a timestamp column: anything else would make the trigger's
            # cast fail inside the app's own writes
            conn.execute(install_sql(self.state_log(heartbeats=self._heartbeat_is_timestamp(conn))))

    def _heartbeat_is_timestamp(self, conn: psycopg.Connection) -> bool:
        if not self.heartbeat_column:
            return False
        row = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = to_regclass(%s) "
            "AND attname = %s AND NOT attisdropped", (self.table, self.heartbeat_column)).fetchone()
        return row is not None and row[0].startswith("timestamp")

    def _select(self) -> sql.Composed:
        def col(name: str | None) -> sql.Composable:
            return sql.Identifier(name) if name else sql.NULL
        def epoch(name: str | None) -> sql.Composable:
            return sql.SQL("extract(epoch FROM {})::float8").format(sql.Identifier(name)) if name else sql.NULL
        return sql.SQL("SELECT {id}::text, {state}::text, {reason}::text, {attempt}, {hb}, {upd} FROM {table}").format(
            id=sql.Identifier(self.id_column), state=sql.Identifier(self.state_column),
            reason=col(self.reason_column), attempt=col(self.attempt_column), hb=epoch(self.heartbeat_column),
            upd=epoch(self.updated_column), table=sql.Identifier(self.table))

    @staticmethod
    def _exists(conn: psycopg.Connection, table: str) -> bool:
        return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()[0]

    def snapshot(self, dsn: str) -> Snapshot:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute(self._select()).fetchall() if self._exists(conn, self.table) else []
        jobs = [JobRow(job_id=r[0], state=r[1], reason=r[2], attempt=r[3], heartbeat_at=r[4], updated_at=r[5])
                for r in rows]
        return Snapshot(jobs=jobs, taken_at_wall=time.time(), terminal_states=self.terminal_states)

    def pending(self, dsn: str) -> int:
        """How many jobs are not in a terminal state (0 when the table is empty or absent)."""
        query = sql.SQL("SELECT count(*) FROM {} WHERE NOT ({}::text = ANY(%s))").format(
            sql.Identifier(self.table), sql.Identifier(self.state_column))
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            if not self._exists(conn, self.table):
                return 0
            return conn.execute(query, (list(self.terminal_states),)).fetchone()[0]

    def state_changes(self, dsn: str) -> list[StateChange]:
        """Every row of the state log (none where the trigger was never installed)."""
        log = self.state_log()
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            return read_state_log(conn, 0, log) if self._exists(conn, log.log_table) else []

    def heartbeats(self, dsn: str) -> list[Beat] | None:
        """Every logged beat; None when config names no heartbeat column or the log was never installed."""
        if not self.heartbeat_column:
            return None
        log = self.state_log()
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            return read_heartbeats(conn, log) if self._exists(conn, log.heartbeat_log_table) else None


def prepare_template(config: Config, dsn: str) -> frozenset[str]:
    """Right after the app's schema is made in the template database: check that config's job table
    and columns exist (a ConfigError naming the key and what exists), then install the state-log
    trigger, so every copy of the template records its jobs' state changes. Returns the keys of
    the optional columns left at their default that the table does not have (not read: ``without``)."""
    defaults = frozenset(key for key in OPTIONAL_COLUMNS if config.sources.get(key) == "default")
    jobs = JobTable.from_config(config)
    absent = jobs.check(dsn, defaults)
    for key in sorted(absent):
        log.info("%s = %r (its default): table %r has no such column, so it is not read",
                 key, getattr(config, key), jobs.table)
    jobs.without(absent).install_state_log(dsn)
    return absent
