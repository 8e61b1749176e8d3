"""A job outlasts its soft time limit: it must end, and before the hard limit kills it.

Every paid call is held before it is sent (framework failpoint
``http.before_paid_call``), so the job cannot finish its work: only the
soft time limit can end it. Celery raises ``SoftTimeLimitExceeded`` where
the task is; the app must let it through every catch-all, save a final
state and leave. One that swallows it goes on until the hard limit kills
the process, and the job stays unfinished. The limits are the ones the
task runs with (its decorator, the app's settings, the worker's flags, as
scaled for the run), read from the task's start. The global invariants
judge.
"""
import pytest

# found: beat, the process that finds jobs nobody works on: stopped, so it cannot send a killed job again and hide it
SWEEPER = "beat"
SLACK = 5.0  # seconds after the hard limit: the task may start late on a busy machine
STARTED_WITHIN = 60.0  # seconds until the task starts on a busy machine


# every paid call is held before it is sent: the provider never sees one
@pytest.mark.jobquake(settle=False, expect_paid_calls=0)  # settled below, while every paid call is still held
def test_a_job_past_its_soft_limit_ends_before_the_hard_limit(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    jq.faults.failpoint("http.before_paid_call", "hang")  # every paid call waits here until healed
    job_id = app.submit_job(1)
    limits = app.task_limits(job_id, timeout=STARTED_WITHIN)  # what the task runs with
    if limits["soft_time_limit"] is None:
        pytest.skip(f"task {limits['task']} runs with no soft time limit: nothing ends a job whose calls hang "
                    f"but the call's own deadline (test_hang.py)")
    bound = limits["time_limit"] or 2 * limits["soft_time_limit"]
    # settled here, just past the hard limit, with the calls still held: healing would let them go,
    # and a job the soft limit failed to end would then finish and hide it
    jq.settle(timeout=float(bound) + SLACK)
