"""The overdue sweep: a poison row is counted and skipped; the deadline stops the sweep, with progress kept."""
from __future__ import annotations

import datetime as dt
import logging

import pytest
import sqlalchemy as sa
from celery.exceptions import SoftTimeLimitExceeded

from refapp import db, sweep
from refapp.failpoints import SWEEP_ROW
from tests.refapp.conftest import Stack


def _invoices(amounts: list[str]) -> list[int]:
    """Fresh invoice table: one open, past-due invoice per amount, plus rows the sweep must skip."""
    past, future = dt.date.today() - dt.timedelta(days=40), dt.date.today() + dt.timedelta(days=5)
    with db.engine().begin() as conn:
        conn.execute(sa.text("TRUNCATE invoices, sweep_runs RESTART IDENTITY"))
        ids = [conn.scalar(sa.insert(db.invoices).values(customer=f"c{n}", amount=a, due_on=past)
                           .returning(db.invoices.c.id)) for n, a in enumerate(amounts)]
        conn.execute(sa.insert(db.invoices).values(customer="later", amount="5", due_on=future))
        conn.execute(sa.insert(db.invoices).values(customer="paid", amount="5", due_on=past, status="paid"))
    return ids


def _statuses(ids: list[int]) -> list[str]:
    with db.engine().connect() as conn:
        rows = dict(conn.execute(sa.select(db.invoices.c.id, db.invoices.c.status)).all())
    return [rows[i] for i in ids]


def _run() -> dict:
    with db.engine().connect() as conn:
        return dict(conn.execute(sa.select(db.sweep_runs)).mappings().one())


def test_a_poison_row_is_counted_and_the_sweep_goes_on(stack: Stack, caplog: pytest.LogCaptureFixture) -> None:
    ids = _invoices(["10", "20", "-5", "30", "40"])

    with caplog.at_level(logging.WARNING, logger="refapp.sweep"):
        summary = sweep.run_overdue_sweep()

    assert (summary["eligible"], summary["processed"], summary["failed"]) == (5, 4, 1)
    assert _statuses(ids) == ["overdue", "overdue", "open", "overdue", "overdue"]
    run = _run()
    assert (run["state"], run["eligible_ids"], run["failed_ids"]) == ("done", ids, [ids[2]])
    assert any(r.levelno == logging.WARNING and "processed=4 failed=1" in r.getMessage() for r in caplog.records)


def test_the_deadline_stops_the_sweep_and_records_how_far_it_got(stack: Stack) -> None:
    ids = _invoices(["10", "20", "30", "40", "50"])
    stack.failpoints.arm(SWEEP_ROW, "raise", exception="celery.exceptions.SoftTimeLimitExceeded",
                         match={"row_id": ids[2]})

    with pytest.raises(SoftTimeLimitExceeded):
        sweep.run_overdue_sweep()

    assert _statuses(ids) == ["overdue", "overdue", "open", "open", "open"]
    run = _run()
    assert (run["state"], run["processed"], run["failed"]) == ("timed_out", 2, 0)
    assert run["reason"] == "timeout: timed out after 2 of 5 invoices"
