"""A sweep over many rows: one bad row must not stop it, and its deadline must.

Every hour refapp's overdue sweep marks each open, past-due invoice
``overdue``, one invoice per transaction, and records the run in
``sweep_runs``: which invoices were eligible, how many it processed, which
failed, how it ended.

**A poison row.** One invoice has a negative amount: marking it raises.
The right sweep counts that row as failed, goes on with the rest, ends
``done`` and logs a warning ``processed=N failed=M`` (the number on-call
alerts on). The bug (``sweep-no-isolation``): a bare loop, so the first
bad row ends the run and every invoice after it stays ``open``, silently,
until someone notices the dunning letters never went out.

**Slow rows and the deadline.** Every row is slow, so the sweep outlasts
its soft time limit. The right sweep lets the deadline through its
per-row isolation: it stops, records ``timed_out`` with how far it got
(``timeout: timed out after i of n invoices``) and leaves the rest for the
next run. The bug (``sweep-swallows-deadline``): the per-row ``except``
also catches the soft limit, charges it to one row and carries on; the
hard limit then kills the process and the run stays ``running`` for ever,
with no progress recorded.

Both are judged by ``sweep_complete`` over the runs as the database left
them (see ``sweep_support.record_sweeps``).
"""
import pytest

from harness import Run
from scenarios import sweep_support as sweeps
from scenarios.refapp_client import RefApp

SWEEP_ROW = "sweep.row"  # refapp's failpoint, per invoice, inside its transaction
# refapp's budget for refapp.sweep_overdue (refapp/budgets.py), in real seconds
SOFT_LIMIT_S, HARD_LIMIT_S = 300, 360
SLOW_ROW_S = 80           # 8 slow rows: 640 s of work against 300 / 360
GRACE_S = 2.0             # scheduler slack on this machine, in our seconds (not scaled)
START_WITHIN_S = 20.0     # the sweep task is queued behind nothing: it starts within this


@pytest.mark.catches("sweep-no-isolation", invariant="sweep_complete")
@pytest.mark.jobquake(checks=["sweep_complete"], expect_jobs=0, expect_paid_calls=0)  # a sweep: no jobs, no model
def test_a_poison_row_is_counted_and_the_sweep_goes_on(jq: Run, refapp: RefApp) -> None:
    logs = sweeps.worker_log_marks(jq)

    # Arrange: three good invoices, the poison row, three more good ones (the sweep goes by id).
    before = sweeps.add_overdue_invoices(refapp, 3, customer="before")
    jq.faults.poison_row("invoices", key=["customer"], values={
        "customer": "poison", "amount": "-5.00", "due_on": sweeps.past_due_date()})
    after = sweeps.add_overdue_invoices(refapp, 3, customer="after")
    [(poison,)] = refapp.query("SELECT id FROM invoices WHERE customer = 'poison'")

    refapp.run_sweep()
    run = sweeps.wait_for_sweep_run(refapp, start_within=START_WITHIN_S, end_within=20.0)

    # The evidence first, so the checker judges this run even if an assertion below fails.
    sweeps.record_sweeps(jq, refapp)
    assert run["eligible_ids"] == before + [poison] + after
    # The on-call metric: a sweep that finished with a failed row says so at warning level.
    # (A sweep that did not finish logs no summary; sweep_complete reports what it left.)
    if run["state"] == "done":
        assert sweeps.worker_log_lines(jq, logs, "WARNING", "sweep_overdue: processed=6 failed=1"), \
            "no warning-level summary 'processed=6 failed=1' in any worker's log"


@pytest.mark.catches("sweep-swallows-deadline", invariant="sweep_complete")
@pytest.mark.jobquake(checks=["sweep_complete"], expect_jobs=0, expect_paid_calls=0,
                      # a run of 640 s of rows cannot be done in 300: the only right ending is timed_out
                      options={"sweep_complete": {"ended_states": ["timed_out"]}})
def test_the_deadline_stops_a_slow_sweep_which_records_how_far_it_got(jq: Run, refapp: RefApp) -> None:
    ids = sweeps.add_overdue_invoices(refapp, 8, customer="slow")
    # Every row takes 80 s (scaled): the soft limit fires a few rows in, the hard limit soon after.
    jq.faults.failpoint(SWEEP_ROW, "sleep", seconds=jq.scaled(SLOW_ROW_S))

    refapp.run_sweep()
    # Wait just past the hard limit: by then the run has ended, or nothing will ever end it.
    run = sweeps.wait_for_sweep_run(refapp, start_within=START_WITHIN_S,
                                    end_within=jq.scaled(HARD_LIMIT_S) + GRACE_S)

    report = sweeps.record_sweeps(jq, refapp)[0]  # the run started above
    if run["state"] == "timed_out":
        reached = len(report["processed"]) + len(report["failed"])
        assert 0 < reached < len(ids), report  # progress kept, and the deadline did stop it
        assert run["reason"] == f"timeout: timed out after {reached} of {len(ids)} invoices", run
        # the rows it did not reach were left alone, open for the next run
        assert set(sweeps.invoice_status(refapp, report["unreached"]).values()) == {"open"}, report
