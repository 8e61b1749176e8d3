"""After the faults heal, the system is back to normal: no consumer slot, thread or connection stays lost.

Each scenario uses up every slot of the SQS consumers (two consumers, two
attempts at once each) with trouble, heals it, then submits a probe job:
a fresh upload on a healed system must finish within the job bound. A slot
that the trouble took and nothing gave back shows only there: the jobs
caught by the fault may be finished or rescued, and every per-job
invariant may hold, while the system has quietly lost its capacity.

* **repeated hangs at the cap**: attempt 1 of four jobs hangs before its
  paid call (a thread nobody can kill) until the cap declares it dead and
  gives its job back; attempt 2 of each finishes it. Bug
  ``abandoned-attempt-keeps-slot``: an attempt abandoned at its cap keeps
  its consumer slot, meant to be given back when its thread ends, which
  nothing does; after four, no message is received any more.
* **messages whose handling raised**: the consumer's handling of a message
  raises four times (the message comes back after its visibility window).
  Bug ``consumer-slot-lost-on-error``: a slot goes back only once a message
  was handled.

The scenarios end with the probe: the harness settles (every job ends) and
``recovers_within_bound`` (switched on by a healed fault, a declared job
bound and a job accepted after the last heal) judges whether the probe ran
within the job bound, and each fault's recovery time against
``recovery_bound``; with a slot lost for good nothing settles, and the
verdict says which probe never ran.
"""
from __future__ import annotations

import pytest

from harness import Run, wait_until
from scenarios import sqs_support as sqs
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
INVARIANT = "recovers_within_bound"
CONSUMER_SLOTS = 4  # two consumers (consumer, consumer2), REFAPP_CONSUMER_CONCURRENCY = 2 each
JOB_BOUND = MARGIN  # a one-document job on a healed system: a second or two
DOCUMENT = ["hotel receipt, paid, thank you"]


def probe(jq: Run, refapp: RefApp, project: str) -> str | None:
    """Declare the bounds, then submit one fresh job on the healed system: it must run within the job bound."""
    jq.expect(job_bound=JOB_BOUND, recovery_bound=sqs.redelivery_bound(jq) + MARGIN, probe_state="done")
    return refapp.submit(DOCUMENT, route="sqs", project=project, file="probe.pdf")


@pytest.mark.catches("abandoned-attempt-keeps-slot", invariant=INVARIANT)
@pytest.mark.jobquake(checks=[INVARIANT])
def test_attempts_abandoned_at_the_cap_leave_the_consumers_their_slots(jq: Run, refapp: RefApp) -> None:
    """Four hung attempts, one per consumer slot, are abandoned at the cap; then a probe job runs."""
    hung = jq.faults.failpoint("task.before_paid_call", "hang", match={"route": "sqs", "attempt": 1})
    jobs = [refapp.submit(DOCUMENT, route="sqs", project="p-capped", file=f"scan-{i}.pdf")
            for i in range(CONSUMER_SLOTS)]
    hung.wait(timeout=MARGIN, count=CONSUMER_SLOTS)  # every slot holds a hung attempt

    def given_back() -> bool:
        return all((job := refapp.job(j))["attempt"] > 1 or job["state"] == "queued" for j in jobs)

    wait_until(given_back, timeout=sqs.attempt_cap(jq) + MARGIN, what="the cap to give every job back")
    hung.heal()  # the hung threads go on, fenced out: they change nothing

    probe(jq, refapp, "p-capped")  # settling, then the invariant, tell whether it ran within the bound


@pytest.mark.catches("consumer-slot-lost-on-error", invariant=INVARIANT)
@pytest.mark.jobquake(checks=[INVARIANT])
def test_messages_whose_handling_raised_leave_the_consumers_their_slots(jq: Run, refapp: RefApp) -> None:
    """Handling a message raises four times (it comes back each time); then a probe job runs."""
    broken = jq.faults.failpoint("consumer.received", "raise", times=CONSUMER_SLOTS, exception="RuntimeError",
                                 message="the message could not be read")
    for i in range(2):
        refapp.submit(DOCUMENT, route="sqs", project="p-unreadable", file=f"scan-{i}.pdf")
    broken.wait(timeout=CONSUMER_SLOTS * sqs.visibility_window(jq) + MARGIN, count=CONSUMER_SLOTS)
    broken.heal()

    probe(jq, refapp, "p-unreadable")
