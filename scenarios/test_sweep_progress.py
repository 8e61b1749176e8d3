"""A sweep the deadline stops after a bad row: its progress counts every row it handled.

``test_sweep.py`` puts a poison row in a sweep that finishes, and slow rows
under a deadline, but never both: so no run ever times out with a failed row
among the rows it reached, and a reason that counts only the rows it marked
reads right. Here the first invoice is the poison row and every row is slow:
the sweep fails the poison row, marks a few more, and the soft limit stops
it. Its reason, ``timeout: timed out after i of n invoices``, is what
on-call reads and what the next run's progress builds on; ``i`` must be the
rows handled, failed ones included.

Judged by ``reasons_match_evidence`` (the reason's ``i of n`` against the
rows the database shows marked by this run plus the rows it recorded as
failed) and ``sweep_complete``.
"""
import pytest

from harness import Run
from scenarios import sweep_support as sweeps
from scenarios.refapp_client import RefApp

SWEEP_ROW = "sweep.row"  # refapp's failpoint, per invoice, inside its transaction
HARD_LIMIT_S = 360        # refapp's hard limit for refapp.sweep_overdue (refapp/budgets.py), real seconds
SLOW_ROW_S = 80           # 1 + 7 slow rows: 640 s of work against a 300 s soft limit
GRACE_S = 2.0             # scheduler slack on this machine, in our seconds (not scaled)
START_WITHIN_S = 20.0     # the sweep task is queued behind nothing: it starts within this


@pytest.mark.catches("sweep-progress-skips-failed", invariant="reasons_match_evidence")
@pytest.mark.jobquake(checks=["reasons_match_evidence", "sweep_complete"], expect_jobs=0, expect_paid_calls=0,
                      options={"sweep_complete": {"ended_states": ["timed_out"]}})
def test_a_timed_out_sweep_counts_the_bad_row_it_handled(jq: Run, refapp: RefApp) -> None:
    """The poison row (first by id) fails, two or three rows are marked, then the soft limit fires.

    Right: ``timed_out``, reason ``after 3 of 8`` when the poison row and two
    others were handled. Bug (``sweep-progress-skips-failed``): ``after 2 of
    8``, the failed row left out.
    """
    jq.faults.poison_row("invoices", key=["customer"], values={
        "customer": "poison", "amount": "-5.00", "due_on": sweeps.past_due_date()})
    good = sweeps.add_overdue_invoices(refapp, 7, customer="slow")
    [(poison,)] = refapp.query("SELECT id FROM invoices WHERE customer = 'poison'")
    jq.faults.failpoint(SWEEP_ROW, "sleep", seconds=jq.scaled(SLOW_ROW_S))

    refapp.run_sweep()
    run = sweeps.wait_for_sweep_run(refapp, start_within=START_WITHIN_S,
                                    end_within=jq.scaled(HARD_LIMIT_S) + GRACE_S)

    report = sweeps.record_sweeps(jq, refapp)[0]  # the evidence first: the checkers judge it whatever follows
    assert run["eligible_ids"] == [poison] + good, "the poison row must come first, or no run reaches it"
    assert report["failed"] == [poison], report
