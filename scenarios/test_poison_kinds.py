"""Poison rows that fail inside the database: a constraint, a lock, a value too big for its column.

The sweep scenario in ``test_sweep.py`` poisons a row in Python (a negative
amount raises before any statement runs). These rows fail in the database
itself, which is where a missing savepoint shows: a statement the database
refuses aborts the whole transaction it ran in (see ``poison_support``).

* **a constraint**: a later migration added a rule (``NOT VALID``: old rows
  are not checked) that one old invoice breaks; marking it overdue violates
  it. Right: that row is counted failed, the sweep marks the rest and ends
  ``done``. Bug ``sweep-shared-transaction``: the sweep runs every row in
  one transaction with no savepoint per row; the violation aborts it, every
  row after the poison fails, and the commit rolls back the rows before it,
  which the run still reports as processed.
* **a lock**: two sweeps overlap (the hourly one is still running when
  someone starts another). The first holds one invoice's row lock while its
  work on that row is stuck. Right: the second sweep waits at most
  ``row_lock_wait`` for it, counts it failed and marks the rest. Bug
  ``sweep-waits-on-locked-row``: it waits for the lock without bound, until
  its own time limit stops the whole sweep.
* **a value too big**: a CSV import whose amount does not fit the ledger's
  ``numeric(12, 2)``, next to a row that is not a number at all. Right: each
  bad row is its own failure, the good rows are booked, the job ends
  ``failed`` saying how many rows failed.

``sweep_complete`` judges the sweeps from the database's own record of what
each run marked (``sweep_support.record_sweeps``); the global invariants
judge the import.
"""
from __future__ import annotations

from typing import Any

import pytest

from harness import Run, wait_until
from harness.errors import WaitTimeout
from refapp import budgets
from scenarios import poison_support as poison
from scenarios import sweep_support as sweeps
from scenarios.refapp_client import RefApp

SWEEP_ROW = "sweep.row"  # refapp's failpoint, per invoice, inside the row's transaction (its lock held)
START_WITHIN_S = 20.0  # a sweep task queued behind nothing starts within this
GRACE_S = 2.0  # scheduler slack on this machine, in our seconds (not scaled)


def sweep_hard_limit(jq: Run) -> float:
    """The overdue sweep's hard time limit in this run's seconds."""
    return budgets.scaled_hard("task:refapp.sweep_overdue", jq.config.time_scale)


@pytest.mark.catches("sweep-shared-transaction", invariant="sweep_complete")
@pytest.mark.jobquake(checks=["sweep_complete"], expect_jobs=0, expect_paid_calls=0)  # a sweep: no jobs, no model
def test_a_row_that_breaks_a_constraint_fails_alone(jq: Run, refapp: RefApp) -> None:
    """Three good invoices, the one a later constraint forbids to change, three more: only it fails."""
    before = sweeps.add_overdue_invoices(refapp, 3, customer="before")
    jq.faults.poison_row("invoices", insert=poison.invoice_breaking_a_later_constraint)
    after = sweeps.add_overdue_invoices(refapp, 3, customer="after")

    refapp.run_sweep()
    run = sweeps.wait_for_sweep_run(refapp, start_within=START_WITHIN_S, end_within=sweep_hard_limit(jq) + GRACE_S)
    sweeps.record_sweeps(jq, refapp)  # the evidence: what each run really marked
    assert len(run["eligible_ids"]) == len(before) + 1 + len(after), run


@pytest.mark.catches("sweep-waits-on-locked-row", invariant="sweep_complete")
@pytest.mark.jobquake(checks=["sweep_complete"], expect_jobs=0, expect_paid_calls=0)
def test_a_row_locked_by_an_overlapping_sweep_fails_alone_and_the_rest_is_marked(jq: Run, refapp: RefApp) -> None:
    """The first sweep holds one invoice locked while stuck on it; a second sweep must not wait for it.

    The lock is real: the first sweep's transaction selected the row ``FOR
    UPDATE`` and its work on the row is held at the ``sweep.row`` failpoint
    until the second sweep has ended (or its hard limit has passed). Then
    the first is let go and ends too.
    """
    ids = sweeps.add_overdue_invoices(refapp, 6, customer="overlap")
    locked = ids[2]
    stuck = jq.faults.failpoint(SWEEP_ROW, "hang", once=True, match={"row_id": str(locked)})

    refapp.run_sweep()
    stuck.wait(timeout=START_WITHIN_S)  # the first sweep holds the row's lock now
    refapp.run_sweep()
    second = wait_for_run(refapp, 1, start_within=START_WITHIN_S, end_within=sweep_hard_limit(jq) + GRACE_S)
    stuck.heal()  # the first sweep goes on with the row it holds
    wait_for_run(refapp, 0, start_within=0, end_within=sweep_hard_limit(jq) + GRACE_S)

    sweeps.record_sweeps(jq, refapp)
    assert locked in second["eligible_ids"], second


def wait_for_run(refapp: RefApp, index: int, *, start_within: float, end_within: float) -> dict[str, Any]:
    """Sweep run ``index`` (0: the oldest) once it ended, or as it is after ``end_within`` seconds.

    A run that never ends is a finding for ``sweep_complete``, not an error here.
    """
    wait_until(lambda: len(sweeps.sweep_runs(refapp)) > index, timeout=max(start_within, 1.0),
               what=f"sweep run {index + 1} to start")
    try:
        wait_until(lambda: sweeps.sweep_runs(refapp)[index]["state"] != "running", timeout=end_within,
                   interval=0.05, what=f"sweep run {index + 1} to end")
    except WaitTimeout:
        pass
    return sweeps.sweep_runs(refapp)[index]


# limits_nest audits the declared limits in every scenario; the cheapest one carries the declaration
@pytest.mark.catches("broker-visibility-below-hard-limit", invariant="limits_nest")
@pytest.mark.jobquake(checks=["limits_nest"], expect_paid_calls=0)  # an import: no model call
def test_an_import_with_a_value_too_big_for_its_column_books_every_other_row(jq: Run, refapp: RefApp) -> None:
    """A CSV import: good rows, one amount that is not a number, one too big for the ledger's column.

    Each bad row fails alone (the one in Python, the one in the database);
    every good row is booked; the job ends ``failed`` with how many rows
    failed. The global invariants judge it; the ledger shows the good rows.
    """
    rows = (poison.GOOD_ROWS[0], poison.NOT_A_NUMBER, poison.GOOD_ROWS[1], poison.TOO_BIG, poison.GOOD_ROWS[2])
    job_id = refapp.submit(None, kind="import", csv=poison.csv_text(*rows), file="ledger-march.csv")

    job = refapp.wait_for(job_id, timeout=20)
    booked = refapp.query("SELECT row_no FROM ledger_entries WHERE job_id = %s ORDER BY row_no", job_id)
    assert [r[0] for r in booked] == [0, 2, 4], booked
    assert (job["state"], job["items_failed"]) == ("failed", 2), job
