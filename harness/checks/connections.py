"""Invariant: connections and transactions are returned.

Once a run has settled nothing works any more, so nothing may still hold a
database connection out of an app process's pool, nor sit in an open
transaction keeping its locks. A code path that forgets (often an error
path: the ``close()`` an exception jumped over, an early ``return``) leaves
the connection checked out until the garbage collector finds it, or for
ever, and its transaction's row locks block the next claim, a sweeper, a
migration.

Evidence, read after the run settled (``harness.evidence.connections``):

* the instrumentation's per-process pool check-outs: a checkout made
  during the test still out in a live process once ``grace`` has passed
  (``connection fail held``), and a connection the garbage collector gave
  back instead of the code (``instrument ok connection_collected``), which
  the pool sees however soon the collector ran;
* ``pg_stat_activity`` for the app processes' sessions (named
  ``jobquake:<process>``, or by the backend pids their pools report): a
  session ``idle in transaction`` once ``grace`` has passed, with the locks
  it holds (``connection fail idle_in_transaction``).

Invalid on any of them; the counterexample says which process, where the
connection was taken (the app's line), since when, and what it locks.
``unknown`` when neither source was read (the run did not settle, no
instrumentation, the database could not be asked) or when no app process
used a pool and no app session was seen: there was nothing to look at.
"""
from __future__ import annotations

from typing import Any

from harness.checks.needs import Missing, Need, last_read
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history.snapshot import Snapshot
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History

NAME = "connections_returned"
POOL_SOURCE, SESSION_SOURCE = v.POOL_SOURCE, v.SESSION_SOURCE  # ``harness ok read`` of each half


def _used(history: History) -> tuple[int, int]:
    pools, sessions = last_read(history, POOL_SOURCE), last_read(history, SESSION_SOURCE)
    return (int(pools["records"]) if pools else -1), (int(sessions["records"]) if sessions else -1)


def _connections_seen(history: History, snapshot: Snapshot | None) -> Missing | None:
    pools, sessions = _used(history)
    if pools < 0 and sessions < 0:
        return Missing("neither the app's pool check-outs nor its database sessions were read "
                       "(the run did not settle, or the instrumentation is off)")
    if pools <= 0 and sessions <= 0 and not history.by_source(v.INSTRUMENT, name=v.COLLECTED):
        return Missing("no app process used a connection pool and no app session was seen in "
                       "pg_stat_activity: nothing to judge")
    return None


CONNECTIONS = Need("connections", "the app's pool check-outs or its database sessions, read after it settled",
                   _connections_seen)


def _collected(history: History, event: Event) -> dict[str, Any]:
    d = event.data
    return {"kind": "returned by the garbage collector", "process": d.get("process"), "pid": d.get("pid"),
            "site": d.get("site"), "held_s": d.get("held_s"), "at": history.relative(event.t)}


def _held(history: History, event: Event) -> dict[str, Any]:
    d = event.data
    return {"kind": "still checked out", "process": d.get("process"), "pid": d.get("pid"), "site": d.get("site"),
            "since": history.relative(float(d["since"])) if d.get("since") is not None else None,
            "backend_pid": d.get("backend_pid")}


def _idle(history: History, event: Event) -> dict[str, Any]:
    d = event.data
    return {"kind": "idle in transaction", "process": d.get("application"), "backend_pid": d.get("backend_pid"),
            "idle_s": d.get("idle_s"), "transaction_s": d.get("transaction_s"), "locks": d.get("locks"),
            "query": d.get("query")}


def _describe(found: dict[str, Any]) -> str:
    where = f" at {found['site']}" if found.get("site") else ""
    if found["kind"] == "idle in transaction":
        locks = ", ".join(found.get("locks") or ()) or "nothing"
        return (f"session {found['backend_pid']} of {found['process']} idle in an open transaction for "
                f"{found['idle_s']:.1f}s, holding {locks} (last query: {found['query']!r})")
    return f"a connection of {found['process']} (pid {found['pid']}) taken{where}: {found['kind']}"


@invariant(NAME, needs=(CONNECTIONS,))
def connections_returned(history: History, snapshot: Snapshot | None) -> Result:
    """Every pooled connection came back by the code, and no app session sits in an open transaction."""
    found = ([_collected(history, e) for e in history.by_source(v.INSTRUMENT, name=v.COLLECTED)]
             + [_held(history, e) for e in history.by_source(v.CONNECTION, name=v.HELD)]
             + [_idle(history, e) for e in history.by_source(v.CONNECTION, name=v.IDLE_IN_TRANSACTION)])
    pools, sessions = _used(history)
    if found:
        return invalid_result(NAME, f"{len(found)} connection(s) not given back; first: {_describe(found[0])}",
                              found, pools_used=max(pools, 0), sessions_seen=max(sessions, 0))
    if pools < 0 or sessions < 0:
        what = "pool check-outs" if pools >= 0 else "database sessions"
        return unknown_result(NAME, f"only the app's {what} could be read, and they show nothing held: "
                              f"the other half of the evidence is missing", pools_used=pools, sessions_seen=sessions)
    return valid_result(NAME, f"every connection came back: {pools} app process(es) used a pool, "
                        f"{sessions} app session(s) seen, none held or idle in a transaction",
                        pools_used=pools, sessions_seen=sessions)
