"""The job table's state log and heartbeat log for one run, read as they grow.

A long run's logs hold hundreds of thousands of rows; read all at once at
the end, they would delay the verdict by seconds. ``JobLogs.read_new()``
may be called any time during the run (the nightly's monitor does, every
few seconds) and once more at the end: each call returns only the rows not
returned before (see ``harness.evidence.log_tail`` for why none is lost),
and ``changes`` / ``beats`` hold everything read so far::

    logs = JobLogs(jobs, dsn)
    changes, beats = logs.read_new()   # during the run, and at the end
    logs.changes, logs.beats           # every row read, None for a log that does not exist
    logs.close()
"""
from __future__ import annotations

import threading

import psycopg

from harness.evidence.heartbeats import Beat, read_heartbeats
from harness.evidence.job_table import JobTable
from harness.evidence.log_tail import LogTail
from harness.evidence.state_log import StateChange, read_state_log


class JobLogs:
    """The two logs of one database; thread-safe (one reader at a time, on one connection)."""

    def __init__(self, jobs: JobTable, dsn: str):
        log = jobs.state_log()
        self._dsn = dsn
        self._changes: LogTail[StateChange] = LogTail(
            log.qualified(log.log_table), lambda conn, since: read_state_log(conn, since, log))
        # heartbeats only where config names the column: no column, no heartbeat evidence
        self._beats: LogTail[Beat] | None = LogTail(
            log.qualified(log.heartbeat_log_table),
            lambda conn, since: read_heartbeats(conn, log, since)) if jobs.heartbeat_column else None
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None
        self._given = (0, 0)  # how many changes and beats earlier calls returned

    def read_new(self) -> tuple[list[StateChange], list[Beat]]:
        """The rows logged since the last call (of the logs that exist). A failed read loses nothing:
        the next call reads those rows."""
        with self._lock:
            try:
                conn = self._connection()
                self._changes.read(conn)
                if self._beats is not None:
                    self._beats.read(conn)
            except psycopg.Error:
                self._disconnect()  # a database under a fault: the next call connects again
                raise
            # from what is held, not what this read found: rows of a call that failed half-way come now
            beats = self._beats.rows if self._beats is not None else []
            new = self._changes.rows[self._given[0]:], beats[self._given[1]:]
            self._given = (len(self._changes.rows), len(beats))
            return new

    @property
    def changes(self) -> list[StateChange]:
        """Every state-log row read so far, in log order ([] when the log does not exist)."""
        return self._changes.rows

    @property
    def beats(self) -> list[Beat] | None:
        """Every beat read so far; None when config names no heartbeat column or the log does not exist."""
        if self._beats is None or not self._beats.found:
            return None
        return self._beats.rows

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=5)
        return self._conn

    def _disconnect(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def close(self) -> None:
        """Close the connection (a later ``read_new`` opens another)."""
        with self._lock:
            self._disconnect()
