"""After a settled run: record what the app still holds of its database (``connections_returned``'s evidence).

Reads the app processes' pool files (``harness.instrument._pools``) and
``pg_stat_activity`` (``harness.evidence.connections``) once the run has
settled, waits up to ``grace`` for what is out at the first look to come
back, and records what did not: ``connection fail held`` per checkout still
out, ``connection fail idle_in_transaction`` per app session sitting in an
open transaction, each read as ``harness ok read`` (``pool_checkouts``:
the app processes whose pools were used during the test; ``db_sessions``:
the app sessions seen). A run that did not settle is not read: its work may
still hold what it took.
"""
from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

import psycopg

from harness.checks.connections import POOL_SOURCE, SESSION_SOURCE
from harness.checks.needs import READ
from harness.evidence.connections import (DEFAULT_GRACE_S, HeldCheckout, IdleSession, app_sessions, backend_pids,
                                          checkouts_out, idle_in_transaction, outlasting, pools_used)
from harness.history import vocabulary as v

log = logging.getLogger(__name__)


def record_connections(run: Any, grace: float = DEFAULT_GRACE_S) -> None:
    """Record the connections the app did not give back (nothing when the run did not settle)."""
    if run.settle_outcome is None or not run.settle_outcome.settled:
        return
    instrument = getattr(run.stack, "instrument", None)
    pools = instrument.pools if instrument is not None else None
    if pools is not None:
        held = outlasting(lambda: checkouts_out(pools(), run._opened), HeldCheckout.key, grace)
        used = pools_used(pools(), run._opened)
        run.history.record(v.HARNESS, "ok", READ, data={"source": POOL_SOURCE, "records": len(used),
                                                          "processes": used})
        for checkout in held:
            run.history.record(v.CONNECTION, "fail", v.HELD, data=asdict(checkout))
    _record_sessions(run, backend_pids(pools()) if pools is not None else [], grace)


def _record_sessions(run: Any, pids: list[int], grace: float) -> None:
    dsn = run.database_dsn
    try:
        seen = app_sessions(dsn, pids)
        idle = outlasting(lambda: idle_in_transaction(app_sessions(dsn, pids)), IdleSession.key, grace)
    except psycopg.Error as exc:  # the database is not there to ask: that half of the evidence is missing
        log.warning("pg_stat_activity could not be read: %s", exc)
        return
    run.history.record(v.HARNESS, "ok", READ, data={"source": SESSION_SOURCE, "records": len(seen)})
    for session in idle:
        run.history.record(v.CONNECTION, "fail", v.IDLE_IN_TRANSACTION, data=asdict(session))
