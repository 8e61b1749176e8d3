"""A job changes hands only when the attempt that holds it is dead, and always under a new token.

Every claim path is a takeover path: a duplicate delivery of a running job,
a delivery of a job whose worker froze, two deliveries at once. Fencing
keeps a dead attempt harmless only if the job's new owner holds a token of
its own and the old one really was dead. ``no_live_attempt_taken`` reads
the app's own liveness evidence: the heartbeats, and which process beat
(each app process's database sessions are named ``jobquake:<process>:<pid>``).

* **A late duplicate** (Celery path): the relay dies between sending a job's
  message and marking it sent; it is back, and sends it again, only once
  the job has run longer than the staleness threshold. Right: the live
  attempt keeps the job. Bug ``claim-judges-by-updated-at``: the claim reads
  "abandoned" from when the row last changed, not from its heartbeat, and
  takes the job from an attempt that beats.
* **A frozen consumer's job, claimed again** (SQS path, sweeper off): attempt
  1's consumer freezes while the provider holds its call; its heartbeat goes
  stale, its message comes back and the other consumer claims the job, which
  waits before its second document. Right: attempt 2 holds token 2 and the
  woken attempt 1 is fenced out. Bug ``takeover-keeps-token``: the
  claim keeps token 1, so the woken attempt still owns the job: both beat,
  both write.
* **Two deliveries at once**: the relay's write marking a message sent fails
  after the send, so the message goes twice; the first delivery's claim reads
  the job, and the second claims it before the first writes. Right: the
  first claim's write finds the row changed and leaves it. Bug
  ``claim-read-then-write``: it writes anyway, numbered from what it read:
  two workers run the job under one token.
"""
from __future__ import annotations

import re
import time

import pytest

from harness import Run, wait_until
from refapp.failpoints import RELAY_BETWEEN_SEND_AND_MARK, TASK_CLAIM_READ, TASK_ITEM
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
FIRST_PAID_STEP = "doc-0.categorise"
DOCUMENTS = ["Invoice 12: payable within 30 days", "Dear Sir, regards"]
CHECKS = ["no_live_attempt_taken", "no_overlapping_attempts"]
# what refapp logs when an attempt finds it was declared dead: at a refused beat, or at a refused write
FENCED_OUT = re.compile(r"was declared dead|leaving it to its new owner")


def age(refapp: RefApp, job_id: str, column: str) -> float:
    """Seconds since the job row's ``column`` (the database's clock)."""
    return float(refapp.query(f"SELECT extract(epoch FROM now() - {column})::float8 FROM jobs WHERE id = %s",
                              job_id)[0][0])


def beat_by(refapp: RefApp, job_id: str, pid: int, after: float = 0.0) -> bool:
    """The heartbeat log has a beat of the job written by process ``pid`` after ``after`` (epoch seconds)."""
    return bool(refapp.query("SELECT 1 FROM jobquake_heartbeat_log WHERE job_id = %s AND writer LIKE %s "
                             "AND changed_at > to_timestamp(%s)", job_id, f"jobquake:%:{pid}", after))


def logged(jq: Run, marks: dict[str, int], words: str) -> bool:
    return any(words in w.logs_since(marks.get(w.name, 0)) for w in jq.workers.workers)


@pytest.mark.catches("claim-judges-by-updated-at", invariant="no_live_attempt_taken")
@pytest.mark.jobquake(checks=CHECKS)
def test_a_late_duplicate_leaves_a_live_attempt_alone(jq: Run, refapp: RefApp) -> None:
    """Attempt 1 waits before its second document (it beats on); the duplicate comes once the row is older
    than the staleness threshold."""
    job_id = job_id_for("p-late-duplicate", "report.pdf")
    between = jq.failpoints.arm(TASK_ITEM, "hang", once=True, match={"job_id": job_id, "attempt": 1, "item": 1})
    jq.faults.failpoint(RELAY_BETWEEN_SEND_AND_MARK, "kill", once=True, match={"job_id": job_id})
    marks = {w.name: w.log_offset() for w in jq.workers.workers}
    assert refapp.submit(DOCUMENTS, project="p-late-duplicate", file="report.pdf") == job_id
    between.wait(timeout=MARGIN)  # attempt 1 saved document 0 and waits, alive

    stale = sqs.budget(jq, "heartbeat_stale")
    wait_until(lambda: age(refapp, job_id, "updated_at") > stale, timeout=stale + MARGIN,
               what="the job's row to be older than the staleness threshold")
    jq.stack.service("relay").start()  # back: the unmarked row goes again
    wait_until(lambda: refapp.job(job_id)["attempt"] > 1 or logged(jq, marks, "in hand"), timeout=MARGIN,
               what="the second delivery to be handled")
    between.heal()
    job = refapp.wait_for(job_id, timeout=MARGIN)
    assert job["attempt"] == 1, job  # the live attempt kept the job


@pytest.mark.catches("takeover-keeps-token", invariant="no_live_attempt_taken")
@pytest.mark.jobquake(checks=CHECKS, settle=False)  # settled below, the sweeper still off
def test_a_frozen_consumers_job_claimed_again_gets_a_new_token(jq: Run, refapp: RefApp) -> None:
    """SQS path: attempt 1's consumer freezes while the provider holds its call; its message comes back
    and the other consumer claims the stale job; attempt 1 wakes while its successor still works."""
    jq.faults.stop_service("sweeper")  # it would re-queue the stale job first; this is the claim's path
    job_id = job_id_for("p-frozen-claim", "report.pdf")
    gate = jq.paidapi.gate(job_id=job_id, step=FIRST_PAID_STEP)
    # the successor waits before its second document, alive and beating
    between = jq.failpoints.arm(TASK_ITEM, "hang", once=True, match={"job_id": job_id, "item": 1})
    assert refapp.submit(DOCUMENTS, project="p-frozen-claim", file="report.pdf", route="sqs") == job_id

    first = int(gate.wait(timeout=MARGIN)["caller_pid"])  # attempt 1's consumer, paying for document 0
    consumer = next(name for name in jq.stack.service_names() if name.startswith("consumer")
                    and jq.stack.service(name).pid == first)
    frozen = jq.faults.pause_service(consumer)  # no heartbeat renews its message or its job
    gate.heal()  # the provider answers; the frozen consumer reads it when it wakes
    # its message comes back once its window lapsed, and the other consumer claims the stale job
    bound = sqs.budget(jq, "heartbeat_stale") + 2 * sqs.visibility_window(jq) + sqs.RECEIVE_WAIT_S + MARGIN
    between.wait(timeout=bound)

    since, woke = jq.stack.service(consumer).log_offset(), time.time()
    frozen.heal()  # attempt 1 wakes while its successor works
    wait_until(lambda: FENCED_OUT.search(jq.stack.service(consumer).logs_since(since))
               or beat_by(refapp, job_id, first, after=woke), timeout=MARGIN,
               what="the woken attempt 1 to be fenced out, or to beat")
    between.heal()
    jq.settle(timeout=len(DOCUMENTS) * sqs.model_deadline(jq) + 2 * sqs.redelivery_bound(jq) + MARGIN)


@pytest.mark.catches("claim-read-then-write", invariant="no_live_attempt_taken")
@pytest.mark.jobquake(checks=CHECKS)
def test_two_deliveries_at_once_make_one_attempt(jq: Run, refapp: RefApp) -> None:
    """The first delivery's claim waits between its read and its write; the second claims meanwhile."""
    job_id = job_id_for("p-twice-at-once", "report.pdf")
    read = jq.faults.failpoint(TASK_CLAIM_READ, "hang", once=True, match={"job_id": job_id})
    jq.faults.failpoint(RELAY_BETWEEN_SEND_AND_MARK, "raise", once=True, match={"job_id": job_id},
                        exception="sqlalchemy.exc.OperationalError")
    gate = jq.paidapi.gate(job_id=job_id, step=FIRST_PAID_STEP)
    assert refapp.submit(DOCUMENTS, project="p-twice-at-once", file="report.pdf") == job_id

    waiting = read.wait(timeout=MARGIN)[0]["pid"]  # the first claim read the job queued
    gate.wait(timeout=MARGIN)  # the second delivery claimed it and pays for document 0
    marks = {w.name: w.log_offset() for w in jq.workers.workers}
    read.heal()
    wait_until(lambda: logged(jq, marks, "in hand") or beat_by(refapp, job_id, waiting), timeout=MARGIN,
               what="the first claim to leave the job, or to take it too")
    gate.heal()
    job = refapp.wait_for(job_id, timeout=MARGIN)
    assert job["attempt"] == 1, job  # the live attempt kept the job
