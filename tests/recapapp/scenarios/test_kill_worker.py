"""A worker is killed while it waits on the model: the job must still end, and be billed once.

The first paid call is held at the provider; the worker whose process
holds it is SIGKILLed at once, by the harness, as soon as the call is held
(main process and pool children: no handler runs, nothing is
acknowledged); the provider then answers and bills the call its client
will never read; a fresh worker starts. The job's message must come back
from the broker (late acks; with Redis, after its visibility timeout, at
the next restore sweep: settle_timeout allows for both), the next attempt
must reuse the call's idempotency key (the provider replays instead of
billing again), and the job must end. The global invariants judge: every
job terminal, no paid call billed twice, no accepted submission lost.
"""
import pytest

from harness.faults import InFlight

# found: beat, the process that finds jobs nobody works on: stopped, so the broker's redelivery is tested alone
SWEEPER = "beat"
SUBMITTED_WITHIN = 60.0  # seconds a submission may take on a busy machine (a process of its own)


@pytest.mark.jobquake(settle=False)  # settled below, within settle_timeout
def test_a_job_whose_worker_dies_mid_call_still_ends_and_is_billed_once(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    kill = jq.faults.kill_worker(when=InFlight())  # the worker holding the next paid call, while it waits
    submitted = app.submit_job_later(1)
    # the kill's record (a failed submission, or calls the fake refused, are named instead)
    killed = app.held_call(kill, submitted, timeout=SUBMITTED_WITHIN)
    job_id = killed.get("job_id")
    if job_id is not None and app.job(job_id)["state"] in jq.config.terminal_states:
        pytest.fail("the job ended before the kill landed (its call's deadline passed first): nothing was "
                    "tested; a longer deadline in [tool.jobquake.env] gives the kill more room")
    kill.heal()  # a fresh worker in the dead one's place
    submitted.result(timeout=SUBMITTED_WITHIN)  # the submission is on record
    jq.settle()  # then the invariants judge (every_job_terminal names a job that is stuck, and how)
