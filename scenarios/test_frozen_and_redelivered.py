"""A worker freezes mid-call, and a message arrives twice while its job runs: one attempt at a time.

Two ways a second attempt can meet a first one that is still alive, on the
Celery path with the sweeper on:

* **a frozen worker** (``pause_service``: SIGSTOP, as a long GC pause or a
  frozen VM would): its job stops heartbeating, so the sweeper declares
  attempt 1 dead and sends the job again; attempt 2 runs on the other
  worker and finishes. When the frozen worker wakes up, attempt 1 must
  change nothing. Bug ``sweeper-judges-by-start-time``: the sweeper calls a
  job abandoned when it *started* long ago, so it also takes attempt 2 away
  while attempt 2 is working, and attempt 3 overlaps it.
* **a duplicate message**: the relay dies between sending a job's message
  and marking it sent, and the restarted relay sends it again while the
  job is running. Right: the second delivery finds the job in the hands of
  a live attempt (fresh heartbeat) and leaves it. Bug
  ``claim-steals-live-job``: any delivery claims a running job, and attempt
  2 runs beside attempt 1.

``no_overlapping_attempts`` judges from the provider's ledger and the
job's state log; the global invariants judge the rest.
"""
from __future__ import annotations

import pytest

from harness import wait_until
from harness.faults._proc import process_tree
from refapp.failpoints import RELAY_BETWEEN_SEND_AND_MARK
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs

MARGIN = 10.0  # seconds a wait may take on a busy machine
DOCUMENTS = [f"page {i} of the annual report" for i in range(5)]


def worker_holding_a_call_of(jq, job_id: str) -> str:
    """The name of the worker whose process tree made the job's call now in flight at the provider."""
    call = jq.paidapi.wait_for_call(job_id, state="in_flight", timeout=MARGIN)
    for worker in jq.workers.workers:
        if call["caller_pid"] in process_tree(worker.pid):
            return worker.name
    raise AssertionError(f"no worker's process tree holds pid {call['caller_pid']} (call {call['call_id']})")


@pytest.mark.catches("sweeper-judges-by-start-time", invariant="no_overlapping_attempts")
@pytest.mark.jobquake(checks=["no_overlapping_attempts"])
def test_a_frozen_workers_job_is_finished_by_another_and_the_frozen_one_changes_nothing(jq, refapp):
    """The worker running a five-document job freezes mid-call; the sweeper rescues the job.

    Slow model calls (0.6 of the deadline each) make the job outlast the
    stale-heartbeat bound, frozen or not: only a sweeper that reads the
    heartbeat leaves the running attempts alone.
    """
    sqs.slow_model_calls(jq, 0.6)  # the only job of this scenario
    job_id = job_id_for("p-frozen", "report.pdf")
    assert refapp.submit(DOCUMENTS, project="p-frozen", file="report.pdf") == job_id

    frozen = jq.faults.pause_service(worker_holding_a_call_of(jq, job_id))
    # its heartbeat goes stale, the sweeper sends the job again, the other worker finishes it
    bound = sqs.budget(jq, "heartbeat_stale") + len(DOCUMENTS) * sqs.model_deadline(jq) + MARGIN
    refapp.wait_for(job_id, timeout=bound)
    frozen.heal()  # attempt 1 wakes up, fenced out


@pytest.mark.catches("claim-steals-live-job", invariant="no_overlapping_attempts")
@pytest.mark.jobquake(checks=["no_overlapping_attempts"])
def test_a_message_delivered_again_while_its_job_runs_leaves_the_running_attempt_alone(jq, refapp):
    """The relay sends a running job's message a second time; the live attempt keeps the job.

    The relay SIGKILLs itself between sending the message and marking it
    sent; once attempt 1 has started, a fresh relay sends the row again.
    """
    sqs.slow_model_calls(jq, 0.6)  # the job outlasts the duplicate's delivery
    job_id = job_id_for("p-twice-running", "report.pdf")
    crash = jq.faults.failpoint(RELAY_BETWEEN_SEND_AND_MARK, "kill", once=True, match={"job_id": job_id})
    assert refapp.submit(DOCUMENTS, project="p-twice-running", file="report.pdf") == job_id

    crash.wait_triggered(timeout=MARGIN)
    jq.paidapi.wait_for_call(job_id, attempt=1, timeout=MARGIN)  # attempt 1 is working
    relay = jq.stack.processes["relay"]
    wait_until(lambda: not relay.is_running(), timeout=MARGIN, what="the relay to die")
    relay.start()  # recovery, not a fault: its first pass sends the row again

    refapp.wait_for(job_id, timeout=len(DOCUMENTS) * sqs.model_deadline(jq) + MARGIN)
