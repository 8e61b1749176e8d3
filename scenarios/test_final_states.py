"""A job a person was shown as finished stays finished, whoever comes late to it.

Two latecomers meet a job that already ended:

* **the sweeper**, which listed the job while its heartbeat was stale (the
  attempt's beats failed on a flaky database connection, though the
  attempt went on working) and reaches it only after the attempt finished.
  Right: the sweeper locks the row and asks again whether the job still
  needs rescuing: it does not, it is ``done``. Bug
  ``sweeper-resends-finished``: "it was on the list", so the ``done`` job
  goes back to ``queued`` and runs a second time.
* **a second delivery** of the job's message, sent again by a relay that
  crashed between sending it and marking it sent, and restarted after the
  job had failed on a provider that never answered. Right: the claim
  refuses it ("already failed"). Bug ``redelivery-retries-failed-job``: a
  job that "only" timed out is started again, and ``failed`` turns into
  ``running``.

``terminal_is_final`` judges both (asked for by name here; it also runs
wherever the job state log exists): a terminal state is never followed by
another state. The refused duplicate claim is also an error path that must
give its connection back (bug ``duplicate-claim-leaks-connection``:
``connections_returned``).
"""
from __future__ import annotations

import pytest

from harness import Run, wait_until
from refapp.failpoints import HEARTBEAT_WRITTEN, SWEEPER_HANDLING, SWEEPER_TICK, TASK_ITEM
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs
from scenarios.refapp_client import RefApp
from scenarios.test_outbox import crash_the_relay_between_send_and_mark, deliveries_handled, restart_the_relay_once_dead

MARGIN = 10.0  # seconds a wait may take on a busy machine
DOCUMENTS = ["invoice from ACME, payable in 30 days", "hotel receipt, paid, thank you"]


@pytest.mark.catches("sweeper-resends-finished", invariant="terminal_is_final")
@pytest.mark.jobquake(checks=["terminal_is_final"])
def test_a_job_that_finished_after_the_sweeper_listed_it_is_left_alone(jq: Run, refapp: RefApp) -> None:
    """The sweeper lists a job whose heartbeat went stale, then finds it ``done``: it leaves it so.

    Attempt 1 is held before its second document while every heartbeat it
    writes fails (a database error inside the beat's transaction, which the
    heartbeat survives), so the job looks abandoned. The sweeper lists it and
    is held right there, before it locks the row; attempt 1 is let go and
    finishes the job; then the sweeper goes on with its old list.
    """
    job_id = job_id_for("p-late-sweeper", "scan.pdf")
    parked = jq.faults.failpoint(TASK_ITEM, "hang", once=True, match={"job_id": job_id, "item": 1})
    jq.faults.failpoint(HEARTBEAT_WRITTEN, "raise", match={"job_id": job_id},
                        exception="sqlalchemy.exc.OperationalError")
    listed = jq.faults.failpoint(SWEEPER_HANDLING, "hang", once=True, match={"job_id": job_id})
    assert refapp.submit(DOCUMENTS, project="p-late-sweeper", file="scan.pdf") == job_id

    parked.wait(timeout=MARGIN)  # attempt 1 is alive, and its heartbeat stops moving
    stale = sqs.budget(jq, "heartbeat_stale") + sqs.budget(jq, "sweeper_interval")
    listed.wait(timeout=stale + MARGIN)  # the sweeper listed the job as abandoned, and waits
    parked.heal()
    assert refapp.wait_for(job_id, timeout=MARGIN)["state"] == "done"
    # a control, not a fault: the sweeper's next pass begins only once the held one has ended
    next_pass = jq.failpoints.arm(SWEEPER_TICK, "return", once=True)
    listed.heal()  # the sweeper reaches a job that finished meanwhile
    next_pass.wait(timeout=MARGIN)


@pytest.mark.catches("redelivery-retries-failed-job", invariant="terminal_is_final")
@pytest.mark.catches("duplicate-claim-leaks-connection", invariant="connections_returned")
@pytest.mark.jobquake(checks=["terminal_is_final", "connections_returned"])
def test_a_message_delivered_again_after_its_job_timed_out_starts_nothing(jq: Run, refapp: RefApp) -> None:
    """A job fails on a provider that never answers; its message comes again; the job stays ``failed``.

    The relay crashes between sending the job's message and marking it sent,
    and is restarted only once the job has failed, so its first pass sends
    the message a second time to a job that already ended.
    """
    log_marks = {worker.name: worker.log_offset() for worker in jq.workers.workers}
    job_id = job_id_for("p-timed-out-twice", "scan.pdf")
    hung = jq.faults.hang_endpoint(layer="provider", job_id=job_id)
    crash = crash_the_relay_between_send_and_mark(jq, job_id)
    assert refapp.submit(DOCUMENTS[:1], project="p-timed-out-twice", file="scan.pdf") == job_id

    crash.wait(timeout=MARGIN)  # the first send went out before the crash
    job = refapp.wait_for(job_id, timeout=sqs.model_deadline(jq) + MARGIN)
    assert (job["state"], job["reason"][:len("timeout")]) == ("failed", "timeout"), job
    hung.heal()  # the provider answers again: a job run a second time would now succeed

    restart_the_relay_once_dead(jq, crash)  # its first pass sends the row a second time
    wait_until(lambda: deliveries_handled(jq, log_marks) >= 2, timeout=MARGIN,
               what="both deliveries of the job's message to be handled")
