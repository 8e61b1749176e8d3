"""A worker is killed while it waits on the model: the job must still end, and be billed once.

Every paid call is held at the provider; once one is held, every worker is
SIGKILLed (main process and pool children: no handler runs, nothing is
acknowledged); the provider then answers and bills the call its client
will never read; fresh workers start. The job's message must come back
from the broker (late acks), the next attempt must reuse the call's
idempotency key (the provider replays instead of billing again), and the
job must end. The global invariants judge: every job terminal, no paid
call billed twice, no accepted submission lost.
"""
import pytest

# found: the process that sends stale jobs again: stopped, so the broker's redelivery is tested alone
SWEEPER = "beat"
MARGIN = 10.0  # seconds of slack for a busy machine
SUBMITTED_WITHIN = 60.0  # seconds a submission may take on a busy machine (a process of its own)


# added by hand after `jobquake init`: the bug of this app it catches
@pytest.mark.catches("no-idempotency-key", invariant="no_double_billing")
@pytest.mark.jobquake(settle=False)  # settled below, within settle_timeout
def test_a_job_whose_worker_dies_mid_call_still_ends_and_is_billed_once(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    gate = jq.paidapi.gate()  # every paid call is held until the gate goes
    submitted = app.submit_job_later(1)  # the kill must land within the call's deadline: no waiting
    held = gate.wait(timeout=SUBMITTED_WITHIN)  # a worker is blocked on the model now
    # the worker that holds the call is among them: every worker dies, whichever made it
    kills = [jq.faults.kill_worker(worker.name) for worker in jq.stack.workers.workers]
    if held.get("job_id") is not None and app.job(held["job_id"])["state"] in jq.config.terminal_states:
        pytest.fail("the job ended before the kill landed (its call's deadline passed first): nothing was "
                    "tested; a longer deadline in [tool.jobquake.env] gives the kill more room")
    gate.heal()  # the provider finishes and bills; nobody is there to read the answer
    for kill in kills:
        kill.heal()  # a fresh worker in each dead one's place
    submitted.result(timeout=SUBMITTED_WITHIN)  # the submission is on record
    jq.settle()  # then the invariants judge (every_job_terminal names a job that is stuck, and how)
