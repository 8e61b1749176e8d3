"""The SQS path: a queue, two asyncio consumers, a heartbeat, a wall-clock cap and a dead-letter queue.

The same document work as the Celery path, submitted with ``route="sqs"``.
Each consumer runs an attempt in a thread pool while a heartbeat on its
event loop extends the message's visibility and the job's heartbeat; the
attempt is capped (``sqs_attempt_cap``) and then fenced out and released;
a failed attempt goes back to the queue, and the delivery after the code's
last attempt fails the job, which the dead-letter queue must not pre-empt.

Each scenario has a single job. A fault that must be in place before the
submission (whose answer is what names the job) is matched on ``route``,
which can then only touch that job; the scenario checks from the
failpoint's record that it did.
"""
import pytest

from harness import Run
from harness.faults import Failpoint
from scenarios import sqs_support as sqs
from scenarios.refapp_client import RefApp

STUCK_BEFORE_PAYING = "task.before_paid_call"
MESSAGE_RECEIVED = "consumer.received"


@pytest.mark.catches("blocking-call-on-loop", invariant="no_overlapping_attempts")
@pytest.mark.jobquake(checks=["no_overlapping_attempts"], settle=False)  # settled below, sweeper still off
def test_a_long_attempt_keeps_its_message_while_it_works(jq: Run, refapp: RefApp) -> None:
    """Slow model calls outlast the visibility window many times over; one attempt does all the work.

    Fault: every call takes 0.8 of the model deadline, and there are enough
    documents for the attempt to outlast the window three times. Once
    attempt 1 runs, every later delivery of the job is held where the
    consumer receives it (``consumer.received`` hang) and let in just after
    one of attempt 1's calls started, well past the window: a second
    attempt, if the app lets one start, starts with attempt 1's call in
    flight.

    Right: the attempt runs in a thread pool; the heartbeat on the event
    loop renews the message and the job's heartbeat; nothing is redelivered
    and the job ends ``done`` at attempt 1. Bug (``blocking-call-on-loop``):
    the attempt runs on the loop, so both heartbeats stall; the message
    reappears, the other consumer finds the job's heartbeat stale and claims
    attempt 2 while attempt 1 still has a call in flight.

    The sweeper is stopped: it would see the same stale heartbeat and
    re-send the job itself, at a moment the scenario does not choose (a
    second attempt claimed between two of attempt 1's calls overlaps
    nothing the evidence can show). The scenario settles before the heal
    starts it again.
    """
    jq.faults.stop_service("sweeper")
    call = sqs.slow_model_calls(jq)
    # let redeliveries in once the window and the stale-heartbeat bound lie well behind
    window = max(sqs.visibility_window(jq), sqs.budget(jq, "heartbeat_stale"))
    release_at = sqs.calls_to_outlast(3 * window, call)
    documents = [f"receipt {i} from the hotel" for i in range(release_at + 2)]

    job_id = refapp.submit(documents, route="sqs", file="long-attempt.pdf")
    refapp.wait_for(job_id, "running", "done", timeout=10)
    # a watch, not the fault (the slow calls are): a control that holds a redelivery, which the
    # right app never makes (so not a fault: it need not land, and it is not recorded)
    held = jq.failpoints.arm(MESSAGE_RECEIVED, "hang", match={"job_id": job_id})
    jq.paidapi.wait_for_call(job_id, step=f"doc-{release_at}.categorise", attempt=1, timeout=30)
    held.heal()

    job = refapp.wait_for(job_id, timeout=30)
    assert job["state"] == "done", job
    assert len(jq.paidapi.billed(job_id)) == len(documents)
    jq.settle()


@pytest.mark.catches("abandoned-work-writes", invariant="no_effect_from_dead_attempt")
@pytest.mark.jobquake(checks=["no_effect_from_dead_attempt"])
def test_an_attempt_released_at_the_cap_pays_for_nothing_afterwards(jq: Run, refapp: RefApp) -> None:
    """Attempt 1 hangs before its paid call past the cap; once attempt 2 is paying, attempt 1 is let go.

    Fault: ``task.before_paid_call`` hangs attempt 1 (a thread nobody can
    kill). At the cap the consumer declares it dead (the job goes back to
    ``queued``) and releases the message; attempt 2 claims the job and calls
    the provider (slow, so its call is still in flight); then the hang is
    released. Right: attempt 1 finds its cancel flag set and its fencing
    token stale, and makes no call; attempt 2 ends the job ``done``. Bug
    (``abandoned-work-writes``): attempt 1 goes on and calls the provider
    with ``X-Attempt: 1`` after it was declared dead.
    """
    sqs.slow_model_calls(jq)
    hang = jq.faults.failpoint(STUCK_BEFORE_PAYING, "hang", match={"route": "sqs", "attempt": 1})

    job_id = refapp.submit(["invoice from ACME"], route="sqs", file="abandoned.pdf")
    fired = hang.wait(timeout=10)
    assert fired[0]["context"]["job_id"] == job_id, fired
    bound = sqs.attempt_cap(jq) + sqs.redelivery_bound(jq) + 10
    jq.paidapi.wait_for_call(job_id, attempt=2, timeout=bound)
    hang.heal()  # attempt 1 goes on

    job = refapp.wait_for(job_id, timeout=30)
    assert (job["state"], job["attempt"]) == ("done", 2), job


@pytest.mark.catches("dlq-before-code-limit", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False)  # the scenario settles itself, within the bound its story sets
def test_a_job_that_always_fails_is_given_up_by_the_code_not_the_queue(jq: Run, refapp: RefApp) -> None:
    """Every model call fails; after the last attempt the job must end ``failed``, not vanish into the DLQ.

    Fault: the paid API answers 500 to every call (the scenario's only job).
    Each attempt fails its document and goes back to the queue with a
    backoff. Right: the queue allows one delivery more than the code's
    attempts, so the fourth delivery reaches the consumer, which fails the
    job: ``error: gave up after 3 attempts (last: ...)``. Bug
    (``dlq-before-code-limit``): the queue's limit equals the code's, it
    moves the fourth delivery to the dead-letter queue, and the job stays
    ``queued``.

    The sweeper is stopped: it re-sends a queued job with no message after
    ``queued_too_long`` and would then hand it to a person, a rescue that
    hides the bug behind a slower defence; each defence is tested alone.
    """
    jq.faults.stop_service("sweeper")
    jq.faults.paidapi_mode("fail")

    job_id = refapp.submit(["hotel receipt"], route="sqs", file="always-fails.pdf")

    attempts = 3  # REFAPP_MAX_ATTEMPTS
    deliveries = attempts + 1  # the last one is where the code gives up
    # bug: SettleTimeout, and the verdict's every_job_terminal names the job the queue dropped
    jq.settle(deliveries * (sqs.redelivery_bound(jq) + 1) + 2)
    job = refapp.job(job_id)
    assert (job["state"], job["attempt"]) == ("failed", attempts), job
    assert job["reason"].startswith(f"error: gave up after {attempts} attempts (last: error:"), job


@pytest.mark.catches("heartbeat-forever", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False)  # the scenario settles itself, within the bound its story sets
def test_a_hung_attempt_is_released_at_the_cap_and_retried(jq: Run, refapp: RefApp) -> None:
    """Attempt 1 hangs for good before its paid call; the cap must release the job to attempt 2.

    Fault: ``task.before_paid_call`` hangs once, for the job's first
    attempt, and stays hung through the heal (a call that never comes back;
    it is let go only after the verdict). Right: the heartbeat stops at the
    wall-clock cap, the attempt is declared dead and the message released;
    attempt 2 ends the job ``done``. Bug (``heartbeat-forever``): the
    heartbeat keeps the message hidden and the job's heartbeat fresh, so the
    job stays ``running`` for ever; the sweeper (left on) cannot tell it
    from a slow job.
    """
    # kept through the verdict: healing it would let the hung attempt go and hide the bug
    hang = jq.faults.keep(Failpoint(STUCK_BEFORE_PAYING, "hang", once=True, match={"route": "sqs"}))

    job_id = refapp.submit(["train ticket"], route="sqs", file="hung-attempt.pdf")
    fired = hang.wait(timeout=10)
    assert fired[0]["context"]["job_id"] == job_id, fired

    jq.settle(sqs.attempt_cap(jq) + sqs.redelivery_bound(jq) + 3)  # bug: SettleTimeout, the job stays running
    job = refapp.job(job_id)
    assert (job["state"], job["attempt"]) == ("done", 2), job
