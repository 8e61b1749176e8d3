"""``python -m refapp.relay``: send what the outbox holds, then mark it sent.

One row per transaction: lock the oldest unsent row (``FOR UPDATE SKIP
LOCKED``, so two relays share the work), send it, mark it sent, commit. A
crash between send and mark sends the row again on the next pass; every
consumer tolerates that. A broker outage is retried with backoff and loses
nothing: an unsent row stays in the table until a send succeeds.
"""
from __future__ import annotations

import logging
import sys
import threading

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from refapp import budgets, dispatch, settings
from refapp.db import NOW, engine, outbox
from refapp.failpoints import RELAY_BETWEEN_SEND_AND_MARK, failpoint
from refapp.loop import run_until_signalled
from refapp.mutants import mutant
from refapp.outbox_wakeups import OutboxWakeups

log = logging.getLogger("refapp.relay")

BATCH = 100  # rows per pass before looking at the stop flag again
MAX_BACKOFF = 30.0  # real seconds between passes while the broker or the DB is down


def _transient() -> tuple[type[BaseException], ...]:
    import botocore.exceptions
    import kombu.exceptions
    import redis.exceptions

    return (kombu.exceptions.OperationalError, redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError, botocore.exceptions.BotoCoreError, OSError)


def _send(destination: str, payload: dict) -> None:
    scale = settings.get().time_scale
    sender = retry(retry=retry_if_exception_type(_transient()), stop=stop_after_attempt(4),
                   wait=wait_exponential(multiplier=0.5 * scale, max=5 * scale), reraise=True)
    sender(dispatch.send)(destination, payload)


def relay_one(conn: Connection) -> bool:
    """Send the oldest unsent row, if any, in ``conn``'s transaction (the caller commits); True if there was one."""
    row = conn.execute(sa.select(outbox).where(outbox.c.sent_at.is_(None)).order_by(outbox.c.id)
                       .limit(1).with_for_update(skip_locked=True)).mappings().first()
    if row is None:
        return False
    where = {"job_id": row["job_id"], "outbox_id": row["id"]}
    if mutant("outbox-mark-before-send"):
        _mark_sent(conn, row["id"])
        conn.commit()  # the wrong order: the row is gone before the message exists
        failpoint(RELAY_BETWEEN_SEND_AND_MARK, **where)
        _send(row["destination"], row["payload"])
        return True
    try:
        _send(row["destination"], row["payload"])
    except _transient() as exc:
        if not mutant("relay-drops-after-retries"):
            raise  # the row stays unsent: the next pass tries again, for as long as the outage lasts
        # the wrong shape: "one undeliverable message must not block the outbox"
        log.error("outbox row %s: giving up after retries (%s); marking it sent", row["id"], exc)
    failpoint(RELAY_BETWEEN_SEND_AND_MARK, **where)
    _mark_sent(conn, row["id"])
    return True


def _mark_sent(conn: Connection, row_id: int) -> None:
    conn.execute(sa.update(outbox).where(outbox.c.id == row_id).values(sent_at=NOW))


def relay_batch(limit: int = BATCH) -> int:
    """Send up to ``limit`` rows, one transaction each; how many were sent."""
    sent = 0
    with engine().connect() as conn:
        while sent < limit:
            try:
                found = relay_one(conn)
                conn.commit()
            except BaseException:
                conn.rollback()  # the row is unlocked and still unsent
                raise
            if not found:
                break
            sent += 1
    return sent


def serve(stop: threading.Event) -> None:
    """Relay until ``stop`` is set: a pass when a row is written (or every ``relay_poll``),
    backing off while sends fail."""
    poll = budgets.scaled("relay_poll")
    retry_after = budgets.scaled("relay_retry")
    backoff = retry_after
    wakeups = OutboxWakeups()
    wakeups.listen()  # before the first pass: a row written after it wakes the next
    try:
        while not stop.is_set():
            try:
                sent = relay_batch()
            except Exception as exc:  # noqa: BLE001 - the row stays unsent; try again later
                log.warning("relay pass failed (%s: %s); retrying in %.2fs", type(exc).__name__, exc, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF * settings.get().time_scale + retry_after)
                continue
            backoff = retry_after
            if sent == 0:
                wakeups.wait(poll, stop)
    finally:
        wakeups.close()


def main() -> int:
    """Run the relay until SIGTERM / SIGINT."""
    return run_until_signalled("relay", serve)


if __name__ == "__main__":
    sys.exit(main())
