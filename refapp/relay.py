"""``python -m refapp.relay``: send what the outbox holds, then mark it sent.

One row per transaction: lock the oldest unsent row (``FOR UPDATE SKIP
LOCKED``, so two relays share the work), send it, mark it sent, commit. A
crash between send and mark sends the row again on the next pass; every
consumer tolerates that. A broker outage is retried with backoff and loses
nothing: an unsent row stays in the table until a send succeeds.

The relay goes over the outbox like a sweep, and a bad row is that row's
problem. A destination whose broker is down is passed over for the rest of
the pass (its rows wait; the other destinations' rows go on), and the pass
backs off before trying it again. A row no send can ever deliver (the
broker's client refuses it as written) is set aside with its error
(``failed_at``, ``error``) and its job, if still queued, fails saying why:
left in place it would be the oldest row of every pass, and every row
behind it would wait for ever.
"""
from __future__ import annotations

import logging
import sys
import threading

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from refapp import budgets, dispatch, events, settings
from refapp.attempt import FAILED, QUEUED
from refapp.db import NOW, engine, jobs, outbox
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


# refusals of the message itself, which no retry changes: a payload the broker's client will not take as
# written, a destination nobody serves, a message SQS will never accept
PERMANENT_SQS_ERRORS = ("InvalidParameterValue", "InvalidMessageContents")


def _permanent(exc: BaseException) -> bool:
    """True when ``exc`` says the row itself cannot be sent (anything else may pass: the row waits)."""
    if isinstance(exc, (TypeError, ValueError)):
        return True
    code = getattr(exc, "response", {}).get("Error", {}).get("Code", "") if hasattr(exc, "response") else ""
    return code in PERMANENT_SQS_ERRORS


def _send(destination: str, payload: dict) -> None:
    scale = settings.get().time_scale
    sender = retry(retry=retry_if_exception_type(_transient()), stop=stop_after_attempt(4),
                   wait=wait_exponential(multiplier=0.5 * scale, max=5 * scale), reraise=True)
    sender(dispatch.send)(destination, payload)


class DestinationDown(Exception):
    """A destination's broker did not take a row after the send's retries; its rows wait."""

    def __init__(self, destination: str, cause: BaseException):
        super().__init__(f"{destination}: {type(cause).__name__}: {cause}")
        self.destination = destination


def relay_one(conn: Connection, passed_over: frozenset[str] = frozenset()) -> bool:
    """Send the oldest unsent row of a destination not ``passed_over``, in ``conn``'s transaction (the caller
    commits); True if there was one. DestinationDown when its broker is down (the row stays unsent)."""
    unsent = [outbox.c.sent_at.is_(None), outbox.c.failed_at.is_(None)]
    if passed_over:
        unsent.append(outbox.c.destination.not_in(passed_over))
    row = conn.execute(sa.select(outbox).where(*unsent).order_by(outbox.c.id)
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
        if mutant("relay-head-of-line"):
            raise  # the wrong shape: the pass ends, and this row comes first again in the next one
        if not mutant("relay-drops-after-retries"):
            raise DestinationDown(row["destination"], exc) from exc  # the row waits for its broker
        # the wrong shape: "one undeliverable message must not block the outbox"
        log.error("outbox row %s: giving up after retries (%s); marking it sent", row["id"], exc)
    except Exception as exc:  # noqa: BLE001 - refused: the row itself, or a broker error that may pass
        if mutant("relay-head-of-line"):
            raise  # the wrong shape: the pass ends, and this row comes first again in the next one
        if not _permanent(exc):
            raise DestinationDown(row["destination"], exc) from exc
        _set_aside(conn, row, exc)
        return True
    failpoint(RELAY_BETWEEN_SEND_AND_MARK, **where)
    _mark_sent(conn, row["id"])
    return True


def _mark_sent(conn: Connection, row_id: int) -> None:
    conn.execute(sa.update(outbox).where(outbox.c.id == row_id).values(sent_at=NOW))


def _set_aside(conn: Connection, row: sa.RowMapping, exc: Exception) -> None:
    """Keep a row no send can deliver out of every later pass, and fail its job (if still queued) saying why."""
    error = f"{type(exc).__name__}: {exc}"
    conn.execute(sa.update(outbox).where(outbox.c.id == row["id"]).values(failed_at=NOW, error=error))
    reason = f"error: its message could not be sent ({error}); nothing was run"
    failed = conn.execute(sa.update(jobs).where(jobs.c.id == row["job_id"], jobs.c.state == QUEUED)
                          .values(state=FAILED, reason=reason, finished_at=NOW, updated_at=NOW)
                          .returning(jobs.c.attempt)).first()
    log.warning("outbox row %s (job %s) set aside: %s", row["id"], row["job_id"], error)
    if failed is not None:
        conn.commit()  # the event follows the commit
        events.publish(events.job_event(row["job_id"], FAILED, reason, failed.attempt))


def relay_batch(limit: int = BATCH) -> int:
    """Send up to ``limit`` rows, one transaction each; how many were sent or set aside.

    A destination whose broker is down is passed over for the rest of the batch;
    DestinationDown at the end names the last, once the others' rows were sent."""
    sent, passed_over, down = 0, frozenset(), None
    with engine().connect() as conn:
        while sent < limit:
            try:
                found = relay_one(conn, passed_over)
                conn.commit()
            except DestinationDown as exc:
                conn.rollback()  # the row is unlocked and still unsent
                passed_over, down = passed_over | {exc.destination}, exc
                continue
            except BaseException:
                conn.rollback()  # the row is unlocked and still unsent
                raise
            if not found:
                break
            sent += 1
    if down is not None:
        raise down
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
