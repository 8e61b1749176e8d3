"""The scheduled overdue-invoice sweep, and the one helper every sweep shares.

``apply_to_each`` is deliberately blunt: apply a callable to every row,
count what worked and what did not, keep going past a bad row, log a
warning-level summary (``processed=N failed=M``, a metric you can alert on)
and, critically, re-raise the time limit: a bad row means keep going, a
deadline means get out. The sweep records which rows were eligible and how
far it got in ``sweep_runs``, also when the deadline stops it.
"""
from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import sqlalchemy as sa
from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy.engine import Connection

from refapp import budgets
from refapp.db import NOW, engine, invoices, sweep_runs
from refapp.failpoints import SWEEP_ROW, failpoint
from refapp.mutants import mutant

log = logging.getLogger(__name__)

TASK = "refapp.sweep_overdue"


@dataclass
class Tally:
    """What a sweep did so far."""

    processed: int = 0
    failed_ids: list[int] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return len(self.failed_ids)

    @property
    def seen(self) -> int:
        return self.processed + self.failed


def apply_to_each(row_ids: Iterable[int], fn: Callable[[int], None], tally: Tally, *, name: str) -> Tally:
    """Apply ``fn`` to every row: a failing row is counted and skipped; the time limit is re-raised."""
    for row_id in row_ids:
        try:
            fn(row_id)
        except Exception as exc:  # noqa: BLE001 - per-row isolation, except for the deadline
            if isinstance(exc, SoftTimeLimitExceeded) and not mutant("sweep-swallows-deadline"):
                raise  # a deadline is a reason to stop, not a bad row
            if mutant("sweep-no-isolation"):
                raise  # the wrong shape: the first bad row ends the sweep
            log.exception("%s: row %s failed", name, row_id)
            tally.failed_ids.append(row_id)
        else:
            tally.processed += 1
    level = logging.WARNING if tally.failed else logging.INFO
    log.log(level, "%s: processed=%d failed=%d", name, tally.processed, tally.failed)
    return tally


def mark_overdue(invoice_id: int, shared: Connection | None = None) -> None:
    """Mark one open, past-due invoice overdue, in its own transaction.

    A row that fails inside the database (a constraint, a lock held too
    long) aborts only its own transaction. ``shared`` is for the
    ``sweep-shared-transaction`` mutant alone.
    """
    with _row_transaction(shared) as conn:
        if not mutant("sweep-waits-on-locked-row"):
            # a row another transaction holds (somebody editing the invoice) fails fast, as this
            # row's problem; the next run gets it. Unbounded, one held row would stall the whole sweep.
            conn.execute(sa.text(f"SET LOCAL lock_timeout = {_lock_wait_ms()}"))
        invoice = conn.execute(sa.select(invoices).where(invoices.c.id == invoice_id)
                               .with_for_update()).mappings().first()
        failpoint(SWEEP_ROW, row_id=invoice_id)
        if invoice is None or invoice["status"] != "open":
            return  # paid or handled since the sweep listed it
        if invoice["amount"] < 0:
            raise ValueError(f"invoice {invoice_id} has a negative amount ({invoice['amount']}); fix the row")
        conn.execute(sa.update(invoices).where(invoices.c.id == invoice_id)
                     .values(status="overdue", overdue_at=NOW))


def _lock_wait_ms() -> int:
    return max(1, round(budgets.scaled("row_lock_wait") * 1000))


@contextlib.contextmanager
def _row_transaction(shared: Connection | None) -> Iterator[Connection]:
    """One row's transaction: its own, or (mutant) the run's shared one, with no savepoint."""
    if shared is not None:
        yield shared  # the wrong shape: one failed statement aborts every row after it
        return
    conn = engine().connect()
    transaction = conn.begin()
    try:
        yield conn
        transaction.commit()
    except BaseException:
        if mutant("row-transaction-leaks-on-error"):
            # the wrong shape: a failed row's transaction, and the row lock it holds, stay open and its
            # connection checked out until the garbage collector gets to them
            raise
        conn.close()  # rolls the row back and gives the connection back
        raise
    conn.close()


def run_overdue_sweep() -> dict[str, object]:
    """Sweep every open invoice past its due date; returns the run's summary."""
    run_id, eligible = _start_run()
    tally = Tally()
    try:
        if mutant("sweep-shared-transaction"):
            with engine().begin() as shared:  # the wrong shape: one transaction for the whole run
                apply_to_each(eligible, functools.partial(mark_overdue, shared=shared), tally,
                              name="sweep_overdue")
        else:
            apply_to_each(eligible, mark_overdue, tally, name="sweep_overdue")
    except SoftTimeLimitExceeded:
        # rows that failed were reached too: the next run starts after them as well
        reached = tally.processed if mutant("sweep-progress-skips-failed") else tally.seen
        _end_run(run_id, "timed_out", tally,
                 f"timeout: timed out after {reached} of {len(eligible)} invoices")
        raise
    except Exception as exc:
        _end_run(run_id, "failed", tally, f"error: {type(exc).__name__}: {exc}")
        raise
    _end_run(run_id, "done", tally, None)
    return {"run_id": run_id, "eligible": len(eligible), "processed": tally.processed, "failed": tally.failed}


def _start_run() -> tuple[int, list[int]]:
    with engine().begin() as conn:
        eligible = list(conn.scalars(
            sa.select(invoices.c.id)
            .where(invoices.c.status == "open", invoices.c.due_on < sa.func.current_date())
            .order_by(invoices.c.id)))
        eligible = _narrowed(conn, eligible)
        run_id = conn.scalar(sa.insert(sweep_runs).values(
            task=TASK, eligible=len(eligible), eligible_ids=eligible).returning(sweep_runs.c.id))
    return int(run_id), eligible


def _narrowed(conn: Connection, eligible: list[int]) -> list[int]:
    """The wrong shapes' narrower runs: each run is every open, past-due invoice, whatever earlier runs did.

    A row an earlier run failed on may have failed for a passing reason (its
    lock held by someone editing it): the next run must try it again. And a
    run must not start where the last one stopped: a row below that point
    can be past due now (it failed then, or its due date was moved).
    """
    if not eligible:
        return eligible
    earlier = conn.execute(sa.select(sweep_runs.c.state, sweep_runs.c.eligible_ids, sweep_runs.c.failed_ids)
                           .where(sweep_runs.c.task == TASK).order_by(sweep_runs.c.id)).all()
    failed_before = {row_id for run in earlier for row_id in run.failed_ids}
    if failed_before & set(eligible) and mutant("sweep-skips-failed-rows"):
        # the wrong shape: "a row that failed is poison; leave it for a person"
        eligible = [row_id for row_id in eligible if row_id not in failed_before]
    done = [max(run.eligible_ids) for run in earlier if run.state == "done" and run.eligible_ids]
    if done and eligible and eligible[0] <= done[-1] and mutant("sweep-resumes-after-last-id"):
        # the wrong shape: "the last run got as far as this id; start after it"
        eligible = [row_id for row_id in eligible if row_id > done[-1]]
    return eligible


def _end_run(run_id: int, state: str, tally: Tally, reason: str | None) -> None:
    with engine().begin() as conn:
        conn.execute(sa.update(sweep_runs).where(sweep_runs.c.id == run_id).values(
            state=state, reason=reason, processed=tally.processed, failed=tally.failed,
            failed_ids=tally.failed_ids, finished_at=NOW))
