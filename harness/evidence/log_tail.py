"""Read an append-only log table as it grows, without missing a row that commits late.

The state log and the heartbeat log take their ids from a sequence when a
row is inserted, but a row becomes visible only when its transaction
commits: a transaction that inserted id 7 may commit after one that
inserted id 9 was read. A reader asking only for ``id > last seen`` would
lose row 7. ``LogTail`` keeps a *safe* cursor instead: every row with an id
at or below it is held. Each read

1. reads the sequence's last value ``S``: every id up to ``S`` is handed out;
2. in one REPEATABLE READ snapshot, notes the snapshot's ``xmin``, reads every
   row above the safe cursor (rows held already are skipped), and then takes
   a transaction id ``T`` of its own: ``T`` is above the id of every
   transaction that had written when ``S`` was read (the trigger writes a log
   row after the app's own write gave the transaction its id, and the id
   comes before the sequence value);
3. moves the safe cursor to the ``S`` of every earlier read whose ``T`` is at
   or below this snapshot's ``xmin``: every transaction that could have
   written a row up to that ``S`` had ended when this snapshot was taken, so
   it saw every row up to ``S`` that will ever exist.

Not the snapshot's own ``xmax`` for ``T``: Postgres sets it to the newest
*completed* id plus one, so the newest transaction, still open, can sit at or
above it; once that transaction is also the oldest one running, ``xmin``
reaches the mark while its row is still invisible, and the cursor would pass
the row before it commits (both logs of one claim lost at once).

Rows are read again above the safe cursor only while a transaction that was
running at an earlier read has not ended: a few seconds' worth. Read during
a run, the end reads only the tail.
"""
from __future__ import annotations

from typing import Any, Callable, Generic, Protocol, TypeVar

import psycopg
from psycopg import sql


class Logged(Protocol):
    log_id: int


Row = TypeVar("Row", bound=Logged)
ReadRows = Callable[[Any, int], list[Row]]  # (connection, since id) -> rows above it, in id order

_XMIN = "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
_OWN_ID = "SELECT pg_current_xact_id()::text::bigint"  # assigned now: above every id handed out before


class LogTail(Generic[Row]):
    """``read(conn)`` returns the rows not read before and keeps them all in ``rows``, in the order read."""

    def __init__(self, table: sql.Identifier, read: ReadRows):
        """``table``: the log table (qualified); ``read``: its reader, given a connection and an id."""
        self.table = table
        self._read = read
        self.rows: list[Row] = []
        self.found: bool | None = None  # whether the table existed at the last read (None: never read)
        self._safe = 0  # every row with an id at or below it is in ``rows``
        self._held: set[int] = set()  # ids above the safe cursor in ``rows``
        self._marks: list[tuple[int, int]] = []  # (sequence's last value, snapshot xmax) of reads not yet safe

    def read(self, conn: psycopg.Connection) -> list[Row]:
        """Read what is new on ``conn`` (an autocommit psycopg connection); [] when the table does not exist."""
        name = self.table.as_string(conn)
        self.found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()[0]
        if not self.found:
            return []
        last = conn.execute("SELECT pg_sequence_last_value(pg_get_serial_sequence(%s, 'id')::regclass)",
                            (name,)).fetchone()[0] or 0
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            xmin = conn.execute(_XMIN).fetchone()[0]  # the snapshot the rows are read in
            rows = self._read(conn, self._safe)
            after = conn.execute(_OWN_ID).fetchone()[0]
        new = [row for row in rows if row.log_id not in self._held]
        self.rows.extend(new)
        self._held.update(row.log_id for row in new)
        self._advance(last, after, xmin)
        return new

    def _advance(self, last: int, after: int, xmin: int) -> None:
        self._marks.append((last, after))
        reached = [last_value for last_value, mark in self._marks if mark <= xmin]
        if reached:
            self._safe = max(self._safe, *reached)
            self._marks = [(last_value, mark) for last_value, mark in self._marks if mark > xmin]
            self._held = {log_id for log_id in self._held if log_id > self._safe}
