"""A sweep over several runs: a row that failed once for a passing reason is handled by a later run.

refapp's overdue sweep lists every open, past-due invoice at the start of
each run (``sweep_runs.eligible_ids``), marks each in its own transaction
and counts the rows that fail. A row can fail for a reason that passes:
someone held its lock, the database blinked. The next run must try it
again. ``sweep_complete`` cannot see a row a run never listed (each run is
complete by its own account); ``sweeps_cover_predicate`` reads the sweep's
own predicate (config ``sweep_predicate``) once the runs are over and holds
every later run to the rows an earlier one listed that still match it.

Bugs: ``sweep-skips-failed-rows`` (a row an earlier run failed on is left
to a person, for good) and ``sweep-resumes-after-last-id`` (a run starts
after the highest row the last finished run listed). Either way the second
run reports ``done`` and the invoice that failed once stays open.
"""
from __future__ import annotations

import pytest

from harness import Run
from scenarios import sweep_support as sweeps
from scenarios.refapp_client import RefApp

SWEEP_ROW = "sweep.row"  # refapp's failpoint, per invoice, inside the row's transaction
START_WITHIN_S = 20.0
END_WITHIN_S = 20.0
CHECKS = ["sweep_complete", "sweeps_cover_predicate"]


@pytest.mark.catches("sweep-skips-failed-rows", invariant="sweeps_cover_predicate")
@pytest.mark.catches("sweep-resumes-after-last-id", invariant="sweeps_cover_predicate")
@pytest.mark.jobquake(checks=CHECKS, expect_jobs=0, expect_paid_calls=0)  # sweeps only: no jobs, no model
def test_a_row_that_failed_once_is_swept_by_the_next_run(jq: Run, refapp: RefApp) -> None:
    """Run 1 over four invoices: the second fails once (a dropped connection). Two more come; run 2."""
    first = sweeps.add_overdue_invoices(refapp, 4, customer="first")
    jq.faults.failpoint(SWEEP_ROW, "raise", once=True, match={"row_id": first[1]},
                        exception="sqlalchemy.exc.OperationalError")
    refapp.run_sweep()
    [run] = sweeps.wait_for_sweep_runs(refapp, 1, end_within=START_WITHIN_S + END_WITHIN_S)
    assert run["failed_ids"] == [first[1]], run  # the failure passed; the row is still open and past due

    later = sweeps.add_overdue_invoices(refapp, 2, customer="later")
    refapp.run_sweep()
    runs = sweeps.wait_for_sweep_runs(refapp, 2, end_within=START_WITHIN_S + END_WITHIN_S)
    sweeps.record_sweeps(jq, refapp)  # the evidence: what each run listed and really marked
    assert len(runs) == 2 and set(later) <= set(runs[1]["eligible_ids"]), runs
