"""The database pool runs dry between the job's write and its enqueue: the job must still run.

The framework failpoint ``django.on_commit`` fires in the process
that submits, right after the job's transaction commits; its action empties
that process's Django connection pool (every connection held by the harness). An
app that queues the job in a second step, needing the database again,
times out there: the job is saved and never run. An app that queues it
without the database again (or writes it with its message: an outbox) has
nothing left to do; it may still tell its caller the pool ran dry, and
that is fine: the submission is then recorded as refused after its row was
written, and the row is judged like any other. A first job, submitted
before the fault, makes sure there is an accepted submission to follow.
The global invariants judge: no accepted submission lost, every job
terminal.
"""
import pytest

# found: beat, the process that finds jobs nobody works on: stopped, so it cannot rescue a lost job and hide it
SWEEPER = "beat"
HOLD_AT_MOST = 5.0  # seconds the connections are held, if the scenario broke before healing
MARGIN = 10.0


# added by hand after `jobquake init`: the bug of this app it catches
@pytest.mark.catches("queue-after-save", invariant="no_lost_submission")
@pytest.mark.jobquake(settle=False)  # settled below
def test_a_job_is_run_although_the_pool_ran_dry_right_after_its_write(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    app.submit_job(1)  # before the fault: an accepted submission to follow
    dry = jq.faults.exhaust_pool(at="django.on_commit", match=app.submitter_match(),
                                 timeout=HOLD_AT_MOST)
    app.try_submit_job(2)  # recorded either way: accepted, or refused after (or before) its row was written
    dry.wait(timeout=MARGIN)  # the pool really was emptied, in the submitting process
    dry.heal()
    jq.settle()  # then the invariants judge
