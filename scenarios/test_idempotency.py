"""Work that runs twice must be paid for once.

Retries are how a job system survives crashes, and every retry is a chance
to pay the model provider again for an answer it already gave. Three ways
the same work comes back, and the defence against each:

* a worker dies while the provider is generating: the provider finishes and
  bills with its client gone, and the next attempt asks again. Defence: an
  idempotency key per job and step, the same on every attempt, so the
  provider replays the answer instead of billing it twice;
* a worker dies after a step's answer was saved: the next attempt must
  find it. Defence: "already done?" asked before paying, not after;
* the user's upload is sent twice (the gateway timed out the first
  request, the browser retried). Defence: a job id derived from the upload,
  so the second request finds the first job and starts nothing.
"""
from __future__ import annotations

import pytest

from harness import Run
from harness.faults import AtFailpoint
from refapp.submit import job_id_for
from scenarios.crash_support import assert_caught_mid_job, kill_every_worker, start_fresh_workers
from scenarios.idempotency_support import record_saved_steps
from scenarios.refapp_client import RefApp

DOCUMENTS = ["invoice from ACME, payable in 30 days", "hotel receipt, paid, thank you"]
FILE = "scan.pdf"
WAIT = 10.0  # seconds a wait may take on a busy machine


@pytest.mark.catches("fresh-idempotency-key", invariant="no_double_billing")
def test_a_call_billed_for_a_dead_worker_is_replayed_not_billed_again(jq: Run, refapp: RefApp) -> None:
    """Same key on every attempt: the provider replays (bug: ``fresh-idempotency-key`` bills twice).

    The gate holds document 0's call at the provider; every worker is
    killed; the gate opens and the provider generates and bills, for a
    client that is gone. The sweeper finds the stale job and sends it
    again; attempt 2 has no saved answer for document 0 and calls again.
    Right: the same key, so the provider replays the first answer for
    free. Bug: each attempt sends a new key, and the provider bills again.
    """
    job_id = job_id_for("p-key", FILE)  # stable: the gate can be armed before submitting
    gate = jq.paidapi.gate(job_id=job_id, step="doc-0.categorise")
    assert refapp.submit(DOCUMENTS, project="p-key", file=FILE) == job_id

    gate.wait(timeout=WAIT)
    kills = kill_every_worker(jq)
    gate.heal()  # the provider finishes, and bills, with its client gone
    assert_caught_mid_job(refapp, job_id)
    start_fresh_workers(kills)

    # attempt 2 asked for document 0 again (the harness settles and judges the billing)
    jq.paidapi.wait_for_call(job_id, step="doc-0.categorise", attempt=2, state="any", timeout=WAIT)


@pytest.mark.catches("check-after-pay", invariant="no_paid_call_for_done_step")
@pytest.mark.jobquake(checks=["no_paid_call_for_done_step"])
def test_a_step_saved_before_the_crash_is_not_paid_for_again(jq: Run, refapp: RefApp) -> None:
    """"Already done?" before paying (bug: ``check-after-pay`` asks only before saving).

    The worker dies just before document 1, after document 0's answer was
    paid for and saved. The sweeper sends the job again; attempt 2 starts
    from document 0. Right: it finds the saved answer and makes no call.
    Bug: it calls the provider first and only then finds the answer saved
    (the stable key makes the provider replay it, so nothing is billed
    twice here; with a provider that cannot deduplicate, it would be).
    """
    job_id = job_id_for("p-done", FILE)
    # the worker that reaches document 1 kills its own process group there
    kill = jq.faults.kill_worker(when=AtFailpoint("task.item", match={"job_id": job_id, "item": "1"}))
    assert refapp.submit(DOCUMENTS, project="p-done", file=FILE) == job_id

    kill.wait()
    assert_caught_mid_job(refapp, job_id)
    assert [r[0] for r in refapp.query("SELECT step FROM step_results WHERE job_id = %s", job_id)] \
        == ["doc-0.categorise"]
    kill.heal()  # a fresh worker in the dead one's place

    refapp.wait_for(job_id, timeout=WAIT)
    record_saved_steps(jq, refapp)  # the evidence: when each step's answer was committed


@pytest.mark.catches("unstable-job-id", invariant="no_upload_billed_twice")
@pytest.mark.jobquake(checks=["no_upload_billed_twice"])
def test_an_upload_sent_twice_is_one_job_billed_once(jq: Run, refapp: RefApp) -> None:
    """One job per upload (bug: ``unstable-job-id`` makes the second request a second job).

    The gateway timed out the user's first request and sent it again. Right:
    the second answer names the same job (``created: false``) and starts
    nothing; each document is billed once. Bug: a fresh job id per request,
    so the upload runs twice and every document is billed twice.

    ``no_double_billing`` cannot see this bug: each of the two jobs is
    billed once under its own keys. ``no_upload_billed_twice`` groups the
    billed calls by what the user uploaded (project and file) instead.
    """
    resend = jq.faults.duplicate_submission(
        lambda: refapp.submit(DOCUMENTS, project="p-twice", file=FILE))

    for job_id in set(resend.results):
        refapp.wait_for(job_id, timeout=WAIT)
