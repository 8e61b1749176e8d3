"""The database pool runs dry between the job's write and its enqueue: the job must still run.

The framework failpoint ``django.on_commit`` fires in the process
that submits, right after the job's transaction commits; its action empties
that process's Django connection pool (every connection held by the harness). An
app that queues the job in a second step, needing the database again,
times out there: the job is saved and never run. An app that writes the
job and its message together (an outbox) has nothing left to do. The
global invariants judge: no accepted submission lost, every job terminal.
"""
import pytest

# found: the process that sends stale jobs again: stopped, so it cannot rescue a lost job and hide it
SWEEPER = "beat"
HOLD_AT_MOST = 5.0  # seconds the connections are held, if the scenario broke before healing
MARGIN = 10.0


# added by hand after `jobquake init`: the bug of this app it catches
@pytest.mark.catches("queue-after-save", invariant="no_lost_submission")
@pytest.mark.jobquake(settle=False)  # settled below
def test_a_job_is_run_although_the_pool_ran_dry_right_after_its_write(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    dry = jq.faults.exhaust_pool(at="django.on_commit", match=app.submitter_match(),
                                 timeout=HOLD_AT_MOST)
    app.submit_job(1)
    dry.wait(timeout=MARGIN)  # the pool really was emptied, in the submitting process
    dry.heal()
    jq.settle(timeout=MARGIN)  # then the invariants judge
