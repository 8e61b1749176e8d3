"""Fencing tokens, the sweeper, and cancellation: a dead attempt changes nothing; nobody's job is lost."""
from __future__ import annotations

import httpx
import pytest
import sqlalchemy as sa

from harness._wait import wait_until
from refapp import budgets, db, jobstore, submit, sweeper
from refapp.attempt import DONE, AttemptAbandoned
from tests.refapp.conftest import Stack, quiet_job


def _heartbeat_long_ago(job_id: str, **values: object) -> None:
    with db.engine().begin() as conn:
        conn.execute(sa.update(db.jobs).where(db.jobs.c.id == job_id)
                     .values(heartbeat_at=sa.func.now() - sa.text("interval '1 hour'"), **values))


def _item_states(job_id: str) -> list[str]:
    with db.engine().connect() as conn:
        return list(conn.scalars(sa.select(db.items.c.state).where(db.items.c.job_id == job_id)
                                 .order_by(db.items.c.idx)))


def test_a_live_attempt_is_not_taken_over(stack: Stack) -> None:
    job_id = quiet_job("live.pdf", ["a"])
    first, _ = jobstore.claim(job_id, "celery")

    second, why = jobstore.claim(job_id, "celery")

    assert first is not None and second is None
    assert why == "in hand: attempt 1 is running it"


def test_a_dead_attempts_late_writes_are_refused(stack: Stack) -> None:
    job_id = quiet_job("fenced.pdf", ["a", "b"])
    stale, _ = jobstore.claim(job_id, "celery")
    _heartbeat_long_ago(job_id)
    current, _ = jobstore.claim(job_id, "celery")  # takes over: the old attempt is declared dead
    assert (stale.token, current.token) == (1, 2)

    with pytest.raises(AttemptAbandoned):
        jobstore.record_item(stale, 0, ok=True, result="invoice", reason=None, retryable=False)
    with pytest.raises(AttemptAbandoned):
        jobstore.finish(stale, DONE, None)
    assert not stale.beat()
    assert stale.cancel.is_set()
    with pytest.raises(AttemptAbandoned):
        stale.ensure_alive()

    assert _item_states(job_id) == ["pending", "pending"]
    assert (stack.job(job_id)["state"], stack.job(job_id)["attempt"]) == ("running", 2)
    jobstore.finish(current, DONE, None)
    assert stack.job(job_id)["state"] == "done"


def _row_is_free(job_id: str) -> bool:
    """True when nobody holds a lock on the job's row (asked without waiting for one)."""
    with db.engine().begin() as conn:
        conn.execute(sa.text("SET LOCAL lock_timeout = '1ms'"))
        try:
            conn.execute(sa.select(db.jobs.c.id).where(db.jobs.c.id == job_id).with_for_update())
        except sa.exc.OperationalError:  # lock_timeout: the row is held
            return False
        return True


def test_an_attempts_transaction_left_idle_holding_its_row_is_ended_by_the_database(stack: Stack) -> None:
    """A worker frozen between its heartbeat's write and commit: Postgres ends the transaction, the lock goes."""
    job_id = quiet_job("frozen-lock.pdf", ["a"])
    attempt, _ = jobstore.claim(job_id, "celery")
    bound = budgets.scaled("db_idle_in_transaction")
    frozen = db.engine().connect()
    try:
        frozen.begin()
        attempt.writes_as(frozen)
        assert attempt.update_owned(frozen, heartbeat_at=db.NOW) == 1  # written, not committed: the row is locked
        assert not _row_is_free(job_id)
        wait_until(lambda: _row_is_free(job_id), timeout=bound + 5.0, what="the frozen transaction's lock to go")
        with pytest.raises(sa.exc.DBAPIError, match="idle-in-transaction"):
            frozen.commit()  # the process wakes to a transaction the database ended
    finally:
        frozen.invalidate()
        frozen.close()

    with db.engine().begin() as conn:  # the bound is the attempt's transaction's own: the session keeps no limit
        attempt.writes_as(conn)
        assert _idle_limit_ms(conn) == round(bound * 1000)
    with db.engine().connect() as conn:
        assert _idle_limit_ms(conn) == 0


def _idle_limit_ms(conn: sa.Connection) -> int:
    return int(conn.scalar(sa.text("SELECT setting FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'")))


def test_the_sweeper_resends_a_job_whose_attempt_stopped_heartbeating(stack: Stack) -> None:
    job_id = quiet_job("orphan.pdf", ["a", "b"])
    jobstore.claim(job_id, "celery")  # attempt 1, whose worker then "died"
    _heartbeat_long_ago(job_id)

    report = sweeper.sweep_once()
    job = stack.wait_terminal(job_id)

    assert job_id in report.resent
    assert (job["state"], job["attempt"], job["dispatches"]) == ("done", 2, 2)
    assert {c["attempt"] for c in stack.ledger(job_id=job_id)} == {2}


def test_the_sweeper_hands_a_job_to_a_person_after_the_last_attempt(stack: Stack) -> None:
    job_id = quiet_job("hopeless.pdf", ["a"])
    jobstore.claim(job_id, "celery")
    _heartbeat_long_ago(job_id, attempt=stack_max_attempts(), reason="error: worker lost")

    report = sweeper.sweep_once()

    assert job_id in report.needs_human
    job = stack.job(job_id)
    assert job["state"] == "needs_human"
    assert job["reason"].startswith(f"needs a person: attempt {stack_max_attempts()} stopped heartbeating")


def stack_max_attempts() -> int:
    from refapp import settings

    return settings.get().max_attempts


def test_a_cancelled_job_stops_at_its_next_check(stack: Stack) -> None:
    job_id = submit.job_id_for("p-cancel", "slow.pdf")
    stack.paid_mode(mode="slow", job_id=job_id, seconds=40)  # 0.2 s per document
    stack.submit(project="p-cancel", file="slow.pdf", documents=[f"page {n}" for n in range(10)])
    wait_until(lambda: stack.ledger(job_id=job_id), timeout=10, what="the first paid call")

    answer = httpx.post(f"{stack.api_url}/jobs/{job_id}/cancel", timeout=5)
    job = stack.wait_terminal(job_id)

    assert answer.status_code == 202
    assert job["state"] == "failed"
    assert job["reason"].startswith("cancelled by user after ")
    assert len(stack.ledger(job_id=job_id)) < 10
