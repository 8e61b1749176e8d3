"""The relay sleeps until an outbox row is committed: woken by the trigger's notification, not by polling."""
from __future__ import annotations

import threading

import sqlalchemy as sa

from refapp import db
from refapp.outbox_wakeups import OutboxWakeups


def test_a_waiting_relay_is_woken_by_a_committed_outbox_row_and_not_before(stack) -> None:
    wakeups, stop = OutboxWakeups(), threading.Event()
    assert wakeups.listen()
    try:
        with db.engine().connect() as conn:
            row = conn.execute(sa.insert(db.outbox).values(job_id="wakeup-probe", destination="celery", payload={})
                               .returning(db.outbox.c.id)).scalar_one()
            conn.execute(sa.delete(db.outbox).where(db.outbox.c.id == row))  # the running relay never sends it
            assert wakeups.wait(0.3, stop) is False  # written but not committed: nothing is delivered yet
            conn.commit()
        assert wakeups.wait(30, stop) is True  # only the notification ends this wait early
    finally:
        wakeups.close()


def test_a_stopped_wait_returns_without_being_woken(stack) -> None:
    wakeups, stop = OutboxWakeups(), threading.Event()
    assert wakeups.listen()
    stop.set()
    try:
        assert wakeups.wait(30, stop) is False
    finally:
        wakeups.close()
