"""Connections the app did not give back: pool check-outs still out, sessions idle in an open transaction.

Read once a run has settled: nothing can still cause work, so a connection
still checked out of an app process's pool, or an app session sitting in an
open transaction (holding whatever it locked), belongs to no work at all.
Two sources, each catching what the other cannot see:

* the pools, as the instrumentation reports them per process
  (``harness.instrument._pools``): a checkout made during the test whose
  process is alive and has not returned it. Postgres cannot see this when
  the database already ended the session (an idle-in-transaction timeout),
  nor a leaked connection that is merely idle;
* ``pg_stat_activity``, for sessions of app processes (named
  ``jobquake:<process>`` by the instrumentation, or by the backend pids
  their pools report): ``idle in transaction``, with the locks it holds.
  This also sees connections made outside any pool.

A sweeper pass or a heartbeat may be running at the moment of the first
look; it gives its connection back within milliseconds. So what is out at
the first look is watched until it is back or ``grace`` has passed, and
only what outlasts ``grace`` counts. A process that is gone (or a
zombie, killed and not yet reaped, or its pid taken by another since)
took its connections with it and is not judged.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, TypeVar

import psycopg

SESSION_PREFIX = "jobquake:"  # application_name the instrumentation gives an app process's sessions
DEFAULT_GRACE_S = 2.0  # far longer than any correct transaction of a settled app; a leak stays for ever
POLL_S = 0.05
T = TypeVar("T")


@dataclass(frozen=True)
class HeldCheckout:
    """A connection an app process checked out during the test and had not returned at the end."""

    pid: int
    process: str
    since: float  # monotonic
    site: str
    backend_pid: int | None

    def key(self) -> tuple[int, float]:
        return self.pid, self.since


@dataclass(frozen=True)
class IdleSession:
    """An app process's database session sitting in an open transaction, doing nothing."""

    backend_pid: int
    application: str
    state: str
    idle_s: float
    transaction_s: float
    locks: tuple[str, ...]
    query: str
    began: float | None = None  # the transaction's start (epoch): one session, one transaction

    def key(self) -> tuple[int, float | None]:
        return self.backend_pid, self.began


def process_started(pid: int | str = "self") -> int | None:
    """When ``pid`` started (clock ticks since boot, ``/proc/<pid>/stat``), None when it is gone or dead.

    A killed process whose parent has not reaped it yet is a zombie: it
    still has a pid, and its connections are long closed.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X", "x") else int(fields[19])


def _alive(pid: int, started: int | None) -> bool:
    """The process runs, and is the one that wrote the file (not a later one that got its pid)."""
    now = process_started(pid)
    return now is not None and (started is None or now == started)


def checkouts_out(pools: Iterable[dict[str, Any]], since: float,
                  alive: Callable[[int, int | None], bool] = _alive) -> list[HeldCheckout]:
    """The checkouts made at or after ``since`` that live processes report as still out."""
    held = []
    for pool in pools:
        pid = int(pool.get("pid") or 0)
        if not pid or not alive(pid, pool.get("started")):
            continue
        for entry in pool.get("out") or ():
            if float(entry.get("since") or 0.0) >= since:
                held.append(HeldCheckout(pid, str(pool.get("process") or ""), float(entry["since"]),
                                         str(entry.get("site") or "?"), entry.get("backend_pid")))
    return held


def pools_used(pools: Iterable[dict[str, Any]], since: float) -> dict[str, int]:
    """{process (pid): checkouts} of the processes whose pools were used at or after ``since``."""
    return {f"{pool.get('process') or '?'} ({pool.get('pid')})": int(pool.get("checkouts") or 0)
            for pool in pools if float(pool.get("last") or 0.0) >= since}


def backend_pids(pools: Iterable[dict[str, Any]]) -> list[int]:
    """The database server pids of every connection the pools report out."""
    return sorted({int(e["backend_pid"]) for pool in pools for e in pool.get("out") or () if e.get("backend_pid")})


_SESSIONS = """
SELECT a.pid, a.application_name, a.state,
       extract(epoch FROM clock_timestamp() - a.state_change)::float8,
       extract(epoch FROM clock_timestamp() - coalesce(a.xact_start, a.state_change))::float8,
       left(coalesce(a.query, ''), 200), extract(epoch FROM a.xact_start)::float8,
       coalesce((SELECT array_agg(DISTINCT coalesce(c.relname, l.locktype::text))
                   FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
                  WHERE l.pid = a.pid AND l.granted AND l.locktype <> 'virtualxid'), '{}')
  FROM pg_stat_activity a
 WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.backend_type = 'client backend'
   AND (a.application_name LIKE %s OR a.pid = ANY(%s))
"""


def app_sessions(dsn: str, pids: list[int]) -> list[IdleSession]:
    """Every session of an app process in the app's database, as ``IdleSession`` rows (any state)."""
    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:  # a fresh snapshot each time
        rows = conn.execute(_SESSIONS, (SESSION_PREFIX + "%", pids)).fetchall()
    return [IdleSession(int(pid), str(app or ""), str(state or ""), float(idle or 0.0), float(xact or 0.0),
                        tuple(sorted(locks or ())), str(query or ""), began)
            for pid, app, state, idle, xact, query, began, locks in rows]


def idle_in_transaction(sessions: Iterable[IdleSession]) -> list[IdleSession]:
    """The sessions sitting in an open (or aborted) transaction."""
    return [s for s in sessions if s.state.startswith("idle in transaction")]


def outlasting(read: Callable[[], list[T]], key: Callable[[T], Hashable], grace: float,
               poll: float = POLL_S) -> list[T]:
    """What ``read`` found at the first look and still finds once ``grace`` has passed (polled: it returns
    as soon as all of it is gone, at once when there is nothing)."""
    first = read()
    deadline = time.monotonic() + grace
    waiting = {key(item) for item in first}
    latest = first
    while waiting and time.monotonic() < deadline:
        time.sleep(min(poll, max(0.0, deadline - time.monotonic())))
        latest = read()
        waiting &= {key(item) for item in latest}
    return [item for item in latest if key(item) in waiting]
