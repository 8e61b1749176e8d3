"""A slow commit: a job's task must not run before its row can be seen.

The framework failpoint ``django.before_commit`` holds the submitting
process just before its transaction commits: the job's row is written and
visible to nobody else yet. An app that queues the job inside the
transaction has published it already: a worker takes it now, finds no row
(or an old one) and leaves, and the job is never run. An app that queues
it in ``transaction.on_commit`` publishes nothing until the commit. The
global invariants judge: every job terminal, no accepted submission lost.
"""
import pytest

# found: the process that sends stale jobs again: stopped, so it cannot send a lost job again and hide it
SWEEPER = "beat"
RUN_WITHIN = 30.0  # seconds a worker may take, on a busy machine, to run a task published before the commit
SUBMITTED_WITHIN = 60.0  # seconds a submission may take on a busy machine (a process of its own)
MARGIN = 10.0


# added by hand after `jobquake init`: the bug of this app it catches
@pytest.mark.catches("enqueue-in-transaction", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False)  # settled below
def test_a_job_is_not_run_before_its_row_is_committed(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    commit = jq.faults.failpoint("django.before_commit", "hang", match=app.submitter_match(), once=True)
    # these two watch (their action changes nothing): a publish by the submitting process, a task run
    published = jq.failpoints.arm("celery.before_publish", "return", match=app.submitter_match())
    ran = jq.failpoints.arm("celery.task_postrun", "return")
    submitted = app.submit_job_later(1)
    commit.wait(timeout=SUBMITTED_WITHIN)  # the job's transaction is held just before its commit
    if published.triggers():  # its task went out inside the transaction: let it run before the commit
        ran.wait(timeout=RUN_WITHIN)
    commit.heal()
    submitted.result(timeout=SUBMITTED_WITHIN)
    jq.settle(timeout=MARGIN)  # then the invariants judge
