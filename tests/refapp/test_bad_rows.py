"""A row no pass can process is set aside or handed to a person; the rows behind it go on (relay, sweeper)."""
from __future__ import annotations

import uuid

import kombu.exceptions
import pytest
import sqlalchemy as sa

from harness._wait import wait_until
from refapp import db, relay, sweeper
from tests.refapp.conftest import Stack, quiet_job

STALE = sa.text("now() - interval '1 hour'")


def _outbox_row(job_id: str, payload: object) -> int:
    with db.engine().begin() as conn:
        return conn.scalar(sa.insert(db.outbox).values(job_id=job_id, destination="celery", payload=payload)
                           .returning(db.outbox.c.id))


def test_an_outbox_row_the_broker_refuses_is_set_aside_and_its_job_fails_saying_why(stack: Stack) -> None:
    job_id = quiet_job("bad-row.pdf", ["one"])
    row_id = _outbox_row(job_id, ["positional", "arguments"])

    def set_aside() -> dict | None:
        with db.engine().connect() as conn:
            row = conn.execute(sa.select(db.outbox).where(db.outbox.c.id == row_id)).mappings().first()
        return dict(row) if row["failed_at"] is not None else None

    row = wait_until(set_aside, timeout=10, what="the relay to set the row aside")
    assert row["sent_at"] is None and "keyword arguments must be a mapping" in row["error"]
    job = stack.wait_terminal(job_id)
    assert job["state"] == "failed" and job["reason"].startswith("error: its message could not be sent"), job


def test_a_destination_whose_broker_is_down_is_passed_over_for_the_rest_of_the_pass(monkeypatch) -> None:
    calls: list[frozenset[str]] = []

    def relay_one(conn, passed_over=frozenset()):
        calls.append(passed_over)
        if not passed_over:
            raise relay.DestinationDown("sqs", kombu.exceptions.OperationalError("refused"))
        return len(calls) == 2  # one celery row, then nothing

    monkeypatch.setattr(relay, "relay_one", relay_one)
    with pytest.raises(relay.DestinationDown, match="sqs"):
        relay.relay_batch()  # says the broker is down, once the other destination's rows went
    assert calls == [frozenset(), frozenset({"sqs"}), frozenset({"sqs"})]


def test_a_job_the_sweeper_cannot_send_again_goes_to_a_person_and_the_pass_goes_on(stack: Stack) -> None:
    legacy = str(uuid.uuid4())
    behind = quiet_job("behind-legacy.pdf", ["one"])
    with db.engine().begin() as conn:
        conn.execute(sa.insert(db.jobs).values(id=legacy, project="archive", file="scan.tif", submitted_by="ana",
                                               kind="documents", route="fax", state="running", attempt=1,
                                               heartbeat_at=STALE, updated_at=sa.text("now() - interval '1 day'")))
        conn.execute(sa.update(db.jobs).where(db.jobs.c.id == behind)
                     .values(state="running", attempt=1, heartbeat_at=STALE, updated_at=STALE))
        conn.execute(sa.text("ALTER TABLE jobs ADD CONSTRAINT jobs_queued_route_exists "
                             "CHECK (state <> 'queued' OR route IN ('celery', 'sqs')) NOT VALID"))
    try:
        report = sweeper.sweep_once()
    finally:
        with db.engine().begin() as conn:
            conn.execute(sa.text("ALTER TABLE jobs DROP CONSTRAINT jobs_queued_route_exists"))

    assert (report.failed, report.needs_human, report.resent) == ([legacy], [legacy], [behind])
    assert stack.job(legacy)["reason"].startswith("needs a person: could not be sent again: CheckViolation")
