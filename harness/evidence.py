"""What the harness reads back from the app's database: the job table and its state log.

The job table is the app's, named in config; the harness only reads it,
apart from the state-log trigger it installs once in the template database
(so every per-test copy records every state change, however short).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from harness.checks.snapshot import JobRow, Snapshot
from harness.config import Config
from harness.history.state_log import StateLogConfig, install_sql, read_state_log


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

    @classmethod
    def from_config(cls, config: Config) -> "JobTable":
        return cls(config.job_table, config.job_id_column, config.job_state_column,
                   config.job_reason_column or None, config.job_attempt_column or None,
                   config.job_heartbeat_column or None, tuple(config.terminal_states))

    def state_log(self) -> StateLogConfig:
        return StateLogConfig(table=self.table, id_column=self.id_column, state_column=self.state_column,
                              reason_column=self.reason_column, attempt_column=self.attempt_column)

    def install_state_log(self, dsn: str) -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(install_sql(self.state_log()))

    def _select(self) -> sql.Composed:
        def col(name: str | None) -> sql.Composable:
            return sql.Identifier(name) if name else sql.NULL
        heartbeat = (sql.SQL("extract(epoch FROM {})::float8").format(sql.Identifier(self.heartbeat_column))
                     if self.heartbeat_column else sql.NULL)
        return sql.SQL("SELECT {id}::text, {state}::text, {reason}::text, {attempt}, {hb} FROM {table}").format(
            id=sql.Identifier(self.id_column), state=sql.Identifier(self.state_column),
            reason=col(self.reason_column), attempt=col(self.attempt_column), hb=heartbeat,
            table=sql.Identifier(self.table))

    @staticmethod
    def _exists(conn: psycopg.Connection, table: str) -> bool:
        return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()[0]

    def snapshot(self, dsn: str) -> Snapshot:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute(self._select()).fetchall() if self._exists(conn, self.table) else []
        jobs = [JobRow(job_id=r[0], state=r[1], reason=r[2], attempt=r[3], heartbeat_at=r[4]) for r in rows]
        return Snapshot(jobs=jobs, taken_at_wall=time.time(), terminal_states=self.terminal_states)

    def pending(self, dsn: str) -> int:
        """How many jobs are not in a terminal state (0 when the table is empty or absent)."""
        query = sql.SQL("SELECT count(*) FROM {} WHERE NOT ({}::text = ANY(%s))").format(
            sql.Identifier(self.table), sql.Identifier(self.state_column))
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            if not self._exists(conn, self.table):
                return 0
            return conn.execute(query, (list(self.terminal_states),)).fetchone()[0]

    def state_events(self, dsn: str) -> list[Any]:
        log = self.state_log()
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            return read_state_log(conn, 0, log) if self._exists(conn, log.log_table) else []
