"""How often a table was scanned, as Postgres itself counts it: a sampler for query budgets.

A static reference table read once per item instead of once per process is
invisible in a job's outcome and obvious in ``pg_stat_user_tables``: its
``seq_scan`` counter (or ``idx_scan``, when the planner reads a small table
through an index, e.g. for ``ORDER BY`` on a never-analysed table) grows
with every read. ``ScanCounter`` samples both counters before and after a
batch and records the difference (by default their sum) as a ``query ok
scan`` event, which the ``query_budget`` checker divides by the batch's
items::

    counter = ScanCounter(jq.database_dsn, "categories").start()
    job_id = submit(documents)
    wait_for(job_id)
    counter.record(jq.history, items=len(documents), job_id=job_id)

Two properties of Postgres's statistics decide how the counter is read:

- Inside a transaction a backend answers every statistics query from one
  snapshot (``stats_fetch_consistency = cache``, the default since 15), so a
  sampler inside a transaction would see a frozen counter. Every read here
  is its own autocommit statement.
- Other backends publish their counts when a transaction ends, but at most
  once per second, and an idle backend publishes what is left only after an
  idle timeout (10 s) or when it exits. The counter therefore lags the work;
  ``settled()`` polls until it stops moving. A count read that way can
  still miss the last second of a backend's work, never add to it: it is a
  lower bound, so a budget that it exceeds was exceeded.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg

from harness._wait import wait_until
from harness.errors import HarnessError, WaitTimeout
from harness.history import vocabulary as v

__all__ = [
    "COUNTERS", "DEFAULT_QUIET", "DEFAULT_TIMEOUT", "POLL", "QueryStatsError", "ScanCounter", "TableScans",
    "read_scans", "settled_scans",
]

COUNTERS = ("seq_scan", "idx_scan")
DEFAULT_QUIET = 1.5  # seconds without change: longer than a busy backend's 1 s publishing interval
DEFAULT_TIMEOUT = 15.0  # seconds: an idle backend publishes after 10 s at the latest
POLL = 0.1


class QueryStatsError(HarnessError):
    """The statistics of a table could not be read (no such table, statistics off, no server)."""


@dataclass(frozen=True)
class TableScans:
    """The scan counters of one table at one moment (``wall``: ``time.time()``)."""

    table: str
    seq_scan: int
    idx_scan: int
    wall: float

    def count(self, counters: tuple[str, ...] = COUNTERS) -> int:
        """The sum of the given counters (``seq_scan``, ``idx_scan``)."""
        return sum(getattr(self, c) for c in _checked(counters))


def _checked(counters: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [c for c in counters if c not in COUNTERS]
    if unknown or not counters:
        raise ValueError(f"unknown counters {unknown or counters!r}; choose from {', '.join(COUNTERS)}")
    return counters


def read_scans(dsn: str, table: str, schema: str = "public") -> TableScans:
    """The counters of ``schema.table`` now, read in an autocommit statement of their own."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            row = conn.execute(
                "SELECT coalesce(seq_scan, 0), coalesce(idx_scan, 0) FROM pg_stat_user_tables "
                "WHERE schemaname = %s AND relname = %s", (schema, table)).fetchone()
            shown = conn.execute("SHOW track_counts").fetchone()
    except psycopg.Error as exc:
        raise QueryStatsError(f"cannot read the statistics of {schema}.{table}: {exc}") from exc
    if row is None:
        raise QueryStatsError(f"no table {schema}.{table} in pg_stat_user_tables (wrong name or database?)")
    if shown is None or shown[0] != "on":
        raise QueryStatsError("track_counts is off: Postgres counts no table scans")
    return TableScans(table, int(row[0]), int(row[1]), time.time())


def settled_scans(dsn: str, table: str, schema: str = "public", *, quiet: float = DEFAULT_QUIET,
                  timeout: float = DEFAULT_TIMEOUT) -> TableScans:
    """The counters once they have not changed for ``quiet`` seconds (polled, within ``timeout``)."""
    last: list[Any] = [read_scans(dsn, table, schema), time.monotonic()]

    def quiet_long_enough() -> TableScans | None:
        now = read_scans(dsn, table, schema)
        if (now.seq_scan, now.idx_scan) != (last[0].seq_scan, last[0].idx_scan):
            last[:] = [now, time.monotonic()]
            return None
        return now if time.monotonic() - last[1] >= quiet else None

    try:
        return wait_until(quiet_long_enough, timeout=timeout, interval=POLL,
                          what=f"the scan counters of {table} to stay unchanged for {quiet:g}s",
                          abort_on=(QueryStatsError,))
    except WaitTimeout as exc:
        raise QueryStatsError(f"{table} kept being scanned for {timeout:g}s: is the app still busy? "
                              f"(last seen {last[0]})") from exc


class ScanCounter:
    """The scans of one table between ``start()`` and ``stop()`` (or ``record()``)."""

    def __init__(self, dsn: str, table: str, *, schema: str = "public", counters: tuple[str, ...] = COUNTERS,
                 quiet: float = DEFAULT_QUIET, timeout: float = DEFAULT_TIMEOUT):
        self.dsn, self.table, self.schema, self.counters = dsn, table, schema, _checked(tuple(counters))
        self.quiet, self.timeout = quiet, timeout
        self.before: TableScans | None = None
        self.after: TableScans | None = None

    def start(self) -> "ScanCounter":
        """Take the baseline once earlier work has been published; returns self."""
        self.before = self._settled()
        return self

    def stop(self) -> int:
        """Wait until the counters settle again; the scans since ``start()``."""
        if self.before is None:
            raise QueryStatsError(f"scan counter of {self.table} stopped before it was started")
        self.after = self._settled()
        return self.after.count(self.counters) - self.before.count(self.counters)

    def record(self, history: Any, *, items: int, job_id: str | None = None) -> int:
        """``stop()``, then record a ``query ok scan`` event ``{table, scans, items}``; the scans."""
        scans = self.stop()
        assert self.before is not None and self.after is not None
        by_counter = {c: self.after.count((c,)) - self.before.count((c,)) for c in COUNTERS}
        history.record(v.QUERY, "ok", v.SCAN, job_id=job_id,
                       data={"table": self.table, "scans": scans, "items": items,
                             "counters": list(self.counters), **by_counter})
        return scans

    def _settled(self) -> TableScans:
        return settled_scans(self.dsn, self.table, self.schema, quiet=self.quiet, timeout=self.timeout)
