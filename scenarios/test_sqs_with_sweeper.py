"""The SQS path with every defence on at once: heartbeat, wall-clock cap, code retries and the sweeper.

``test_sqs.py`` tests each SQS defence alone, with the sweeper stopped where
it would hide a bug. Here the sweeper runs, as it does in production, and
the defences meet:

* **a long attempt**: slow model calls keep one attempt busy for several
  visibility windows. The heartbeat must keep both alive: the message (for
  the queue) and the job row's heartbeat (for the sweeper). Bug ``sqs-heartbeat-message-only``:
  only the message is renewed; the sweeper finds the job "abandoned", sends
  it again and a second consumer starts attempt 2 while attempt 1 still
  works.
* **a provider that never answers**: every attempt times out; after the
  code's last attempt the job must end ``failed`` as a *timeout*, within the
  retries' own bound. Bugs: ``retry-timed-out-call`` (every attempt waits
  out three deadlines: the step is blocked on the provider past its bound),
  ``give-up-relabels-timeout`` (the final reason says ``error:``),
  ``sqs-delete-on-receive`` (the message is deleted on receipt, so the
  first retry has none and the job waits for the sweeper's slow rescue),
  ``dlq-before-code-limit`` (the dead-letter queue takes the
  last delivery; only the sweeper's slow rescue ends the job).
* **a dead attempt that wakes up before paying**: one user's attempt 1
  stalls just before a paid call, past the cap, while other users' jobs run;
  attempt 2 takes over. When attempt 1 wakes up it must not pay. Bugs
  ``pay-before-fence`` (it pays first and only finds out at the save),
  ``abandoned-work-writes`` (no fence at all).
* **a dead attempt's last word**: attempt 1 is about to write its verdict
  (``failed``: one document broke) when it stalls past the cap. The cap
  declares it dead and attempt 2 finishes the job ``done``. Then attempt 1
  wakes up and writes. Right: the fence refuses it and nobody is told
  anything. Bugs: ``unfenced-final-write`` (the job says ``failed`` again),
  ``event-for-refused-write`` (users are told ``failed`` about a job the
  database holds ``done``).
"""
from __future__ import annotations

import pytest

from harness import Run, wait_until
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs
from scenarios.many_users import UPLOADS, submit_all
from scenarios.refapp_client import RefApp, TERMINAL

DEADLINE = 1.0  # REFAPP_MODEL_DEADLINE_S = 100 (real seconds) at the default time scale 0.01
# A hung job's reason must START with "timeout:": refapp's reasons lead with their label, and
# "error: gave up after 3 attempts (last: timeout: ...)" merely mentions it. The deadline lets the
# checker recognise the hung calls once the hang is healed (healing answers them 503).
LABELLED = {"label": "timeout:", "prefix": True, "deadline": DEADLINE}
MARGIN = 10.0  # seconds a wait may take on a busy machine


# The overlap of sqs-heartbeat-message-only shows only when attempt 2 starts while attempt 1's call is
# in flight (more often the fence stops attempt 1 first); no_live_attempt_taken sees it every time: the
# sweeper takes the job from an attempt that was alive and working, whose job heartbeat never beat.
@pytest.mark.catches("sqs-heartbeat-message-only", invariant="no_live_attempt_taken")
@pytest.mark.jobquake(checks=["no_overlapping_attempts", "no_live_attempt_taken"])
def test_a_long_sqs_attempt_stays_alive_for_the_queue_and_for_the_sweeper(jq: Run, refapp: RefApp) -> None:
    """Slow answers keep one SQS attempt busy for many windows; the sweeper must leave it alone.

    Right: one attempt does every document and the job ends ``done`` at
    attempt 1. Bug: the job's heartbeat goes stale while the message stays
    hidden; the sweeper re-sends the job, attempt 1 is fenced out, attempt 2
    meets the same fate, and after three attempts the job that nobody
    abandoned is handed to a person.
    """
    delay = sqs.slow_model_calls(jq, 0.6)  # every call takes 0.6 of the model deadline (the only job)
    stale = max(sqs.visibility_window(jq), sqs.budget(jq, "heartbeat_stale"))
    documents = [f"hotel receipt, night {i}" for i in range(sqs.calls_to_outlast(3 * stale, delay) + 1)]

    job_id = refapp.submit(documents, route="sqs", file="long-stay.pdf")
    job = refapp.wait_for(job_id, timeout=len(documents) * sqs.model_deadline(jq) + MARGIN)
    assert (job["state"], job["attempt"]) == ("done", 1), job


@pytest.mark.catches("retry-timed-out-call", invariant="end_to_end_deadline")
@pytest.mark.catches("give-up-relabels-timeout", invariant="timeout_labelled")
@pytest.mark.catches("sqs-delete-on-receive", invariant="every_job_terminal")
@pytest.mark.catches("dlq-before-code-limit", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False, checks=["timeout_labelled", "end_to_end_deadline"],
                      options={"timeout_labelled": LABELLED})
def test_an_sqs_job_whose_calls_always_hang_is_given_up_as_a_timeout(jq: Run, refapp: RefApp) -> None:
    """The provider accepts every call and never answers; the code retries, then gives up, as a timeout.

    Each attempt's call ends at the deadline; the attempt goes back to the
    queue with a back-off; the delivery after the code's last attempt fails
    the job: ``timeout: gave up after 3 attempts (last: timeout: ...)``. The
    run is settled within the retries' own bound, before the sweeper's
    rescue of a queued job with no message (``queued_too_long``) could hide
    a lost one.
    """
    assert sqs.model_deadline(jq) == pytest.approx(DEADLINE), "the checks' options assume this deadline"
    jq.faults.hang_endpoint(layer="provider")  # the scenario's only job
    refapp.submit(["scanned delivery note"], route="sqs", file="never-answered.pdf")

    deliveries = 3 + 1  # REFAPP_MAX_ATTEMPTS, then the delivery where the code gives up
    per_delivery = sqs.model_deadline(jq) + sqs.redelivery_bound(jq) + 1.0
    bound = min(deliveries * per_delivery + 2.0, sqs.budget(jq, "queued_too_long") - 1.0)
    jq.settle(timeout=bound)  # bug: SettleTimeout, and every_job_terminal names the job still waiting


@pytest.mark.catches("pay-before-fence", invariant="no_effect_from_dead_attempt")
@pytest.mark.catches("abandoned-work-writes", invariant="no_effect_from_dead_attempt")
@pytest.mark.jobquake(checks=["no_effect_from_dead_attempt"])
def test_an_attempt_woken_after_the_cap_pays_for_nothing_while_other_jobs_run(jq: Run, refapp: RefApp) -> None:
    """The first user's attempt 1 stalls before document 1's call past the cap; it wakes once attempt 2 pays.

    Slow calls keep attempt 2's call in flight when attempt 1 is let go, so
    a call attempt 1 made then would be its own, after it was declared dead.
    """
    sqs.slow_model_calls(jq, 0.6)
    first, *_ = job_ids = [job_id_for(u.project, u.file) for u in UPLOADS]
    stalled = jq.faults.failpoint("task.before_paid_call", "hang", once=True,
                                  match={"job_id": first, "attempt": 1, "step": BROKEN_DOCUMENT})
    submit_all(refapp, route="sqs")

    stalled.wait(timeout=MARGIN)
    bound = sqs.attempt_cap(jq) + sqs.redelivery_bound(jq) + MARGIN
    jq.paidapi.wait_for_call(first, attempt=2, timeout=bound)  # attempt 2 is paying
    stalled.heal()
    for job_id in job_ids:
        refapp.wait_for(job_id, timeout=MARGIN)


BROKEN_DOCUMENT = "doc-1.categorise"  # refapp's paid step of document 1


@pytest.mark.catches("event-for-refused-write", invariant="status_events_consistent")
@pytest.mark.catches("unfenced-final-write", invariant="writes_by_current_attempt")
@pytest.mark.jobquake(checks=["status_events_consistent", "writes_by_current_attempt"],
                      options={"status_events_consistent": {"require_final_event": True}})
def test_a_verdict_written_after_the_cap_by_a_dead_attempt_changes_nothing(jq: Run, refapp: RefApp) -> None:
    """Attempt 1 stalls just before writing ``failed``; attempt 2 ends the job ``done``; then 1 wakes up.

    Document 1 breaks in attempt 1 only (a failpoint raises in its work), so
    attempt 1 concludes ``failed`` and stalls just before writing it, past
    the cap. The consumer declares attempt 1 dead and releases the message;
    attempt 2 finds document 0 saved, pays for document 1 and ends the job
    ``done``. Attempt 1 is then let go: its write and its event must not
    happen.
    """
    # the bus, not a stream: the API's streams drop an event older than what they told (attempt 2's done),
    # but every other subscriber of the channel would tell its user the job failed
    events = refapp.listen_to_the_bus()
    job_id = job_id_for("p-late-verdict", "scan.pdf")  # stable: the failpoints can name it first
    jq.faults.failpoint("task.before_paid_call", "raise", exception="ValueError", message="unreadable page",
                        match={"job_id": job_id, "attempt": 1, "step": BROKEN_DOCUMENT})
    stalled = jq.faults.failpoint("task.before_final_write", "hang", once=True,
                                  match={"job_id": job_id, "attempt": 1, "state": "failed"})
    assert refapp.submit(["invoice from ACME", "hotel receipt"], project="p-late-verdict", file="scan.pdf",
                         route="sqs") == job_id

    stalled.wait(timeout=MARGIN)
    bound = sqs.attempt_cap(jq) + sqs.redelivery_bound(jq) + MARGIN
    assert refapp.wait_for(job_id, "done", timeout=bound)["attempt"] == 2
    marks = {name: jq.stack.service(name).log_offset() for name in CONSUMERS}
    stalled.heal()  # attempt 1 goes on to write its verdict
    wait_until(lambda: refapp.job(job_id)["state"] != "done" or refused_in_logs(jq, marks, job_id),
               timeout=MARGIN, what="attempt 1 to try its final write")

    # users go on uploading; once the next job's end has reached them, so has every earlier event
    later = refapp.submit(["train ticket"], project="p-late-verdict", file="next.pdf")
    wait_until(lambda: set(events.states(later)) & set(TERMINAL), timeout=MARGIN, what="the next job's end")


CONSUMERS = ("consumer", "consumer2")


def refused_in_logs(jq: Run, marks: dict[str, int], job_id: str) -> bool:
    """A consumer logged that attempt 1's write was refused (refapp: "... no longer owns it")."""
    refused = f"attempt 1 of job {job_id} no longer owns it"
    return any(refused in jq.stack.service(name).logs_since(offset) for name, offset in marks.items())
