"""The headline faults with two of every singleton: two relays, two sweepers, two pairs of consumers.

Production runs several copies of each background process; a race that
needs two of them (a row sent twice because nothing locked it, two sweepers
rescuing the same job) never shows on a stack that runs one. Each scenario
here asks the stack for two replicas (``@pytest.mark.jobquake(replicas=...)``,
like config's ``replicas = 2``) and injects one headline fault; the
invariants judge as always, ``no_live_attempt_taken`` among them.

* **A worker killed mid-job, its message gone**: both sweepers find the
  abandoned job. Right: whichever locks it first re-sends it; the other,
  judging it again under its lock, finds it running and leaves it. Bug
  ``sweeper-rescues-without-recheck``: the second sweeper locks the job by
  id and handles it as it listed it: it takes the job from the attempt the
  first rescue started (here forced: the second sweeper is held between
  listing the job and locking it until that attempt runs).
* **A relay killed between send and mark**: the other relay sends the row
  again; the job runs once.
* **The provider hangs on the SQS path**: four consumers share the job's
  attempts; each ends at its deadline and the job fails with a timeout.
* **The API's pool runs dry right after a job is saved**: two relays send
  its message; the job runs once.
"""
from __future__ import annotations

import time

import pytest

from harness import Run, wait_until
from refapp.failpoints import RELAY_BETWEEN_SEND_AND_MARK, SUBMIT_AFTER_JOB_WRITE, SWEEPER_HANDLING, SWEEPER_TICK
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs
from scenarios.crash_support import kill_mid_job_and_lose_its_message
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
REPLICAS = {"relay": 2, "sweeper": 2, "consumer": 2}
DOCUMENTS = ["Invoice 12: payable within 30 days", "Dear Sir, regards"]


def job_row(refapp: RefApp, job_id: str) -> dict[str, object]:
    rows = refapp.query("SELECT state, attempt, dispatches FROM jobs WHERE id = %s", job_id)
    return dict(zip(("state", "attempt", "dispatches"), rows[0]))


@pytest.mark.catches("sweeper-rescues-without-recheck", invariant="no_live_attempt_taken")
@pytest.mark.jobquake(checks=["no_live_attempt_taken"], replicas=REPLICAS)
def test_two_sweepers_rescue_an_abandoned_job_once(jq: Run, refapp: RefApp) -> None:
    """One sweeper is held between listing the job and locking it, until the other's rescue runs."""
    job_id = job_id_for("p-two-sweepers", "report.pdf")
    held = jq.faults.failpoint(SWEEPER_HANDLING, "hang", once=True, match={"job_id": job_id})
    second_call = jq.paidapi.gate(job_id=job_id, step="doc-1.categorise")  # the rescued attempt's second call
    kill_mid_job_and_lose_its_message(jq, refapp, DOCUMENTS, project="p-two-sweepers")

    listed = held.wait(timeout=MARGIN)[0]["pid"]  # this sweeper listed the job and waits
    second_call.wait(timeout=MARGIN)  # the other one re-sent it: attempt 2 runs, paying for document 1
    passes = jq.failpoints.arm(SWEEPER_TICK, "sleep", seconds=0)  # a control: each pass's start, recorded
    released = time.monotonic()
    held.heal()
    wait_until(lambda: any(t["pid"] == listed and t["t"] > released for t in passes.triggers()),
               timeout=MARGIN, what="the held sweeper to finish its pass")
    second_call.heal()
    job = refapp.wait_for(job_id, timeout=MARGIN)
    assert job["attempt"] == 2, job  # one rescue: one more attempt


@pytest.mark.jobquake(replicas=REPLICAS)
def test_a_killed_workers_job_is_rescued_once_by_two_sweepers(jq: Run, refapp: RefApp) -> None:
    job_id = kill_mid_job_and_lose_its_message(jq, refapp, DOCUMENTS, project="p-rescued-once")
    rescue = sqs.budget(jq, "heartbeat_stale") + sqs.budget(jq, "sweeper_interval")
    refapp.wait_for(job_id, timeout=rescue + MARGIN)
    assert job_row(refapp, job_id)["dispatches"] == 2, "one rescue: the first send and one more"


@pytest.mark.jobquake(replicas=REPLICAS)
def test_a_relay_killed_between_send_and_mark_leaves_the_other_to_send_again(jq: Run, refapp: RefApp) -> None:
    job_id = job_id_for("p-two-relays", "report.pdf")
    killed = jq.faults.failpoint(RELAY_BETWEEN_SEND_AND_MARK, "kill", once=True, match={"job_id": job_id})
    assert refapp.submit(DOCUMENTS, project="p-two-relays", file="report.pdf") == job_id
    killed.wait(timeout=MARGIN)
    job = refapp.wait_for(job_id, timeout=MARGIN)
    assert job["attempt"] == 1, job  # the second send found the job taken, and left it


@pytest.mark.jobquake(checks=["timeout_labelled"], replicas=REPLICAS)
def test_a_hung_provider_on_the_sqs_path_ends_the_job_at_its_deadlines(jq: Run, refapp: RefApp) -> None:
    job_id = job_id_for("p-four-consumers", "report.pdf")
    jq.faults.hang_endpoint(layer="provider", job_id=job_id)
    assert refapp.submit(DOCUMENTS[:1], project="p-four-consumers", file="report.pdf", route="sqs") == job_id
    attempts = jq.config.env.get("REFAPP_MAX_ATTEMPTS", "3")
    bound = int(attempts) * (sqs.model_deadline(jq) + sqs.redelivery_bound(jq)) + MARGIN
    job = refapp.wait_for(job_id, timeout=bound)
    assert job["state"] == "failed" and job["reason"].startswith("timeout:"), job


@pytest.mark.jobquake(replicas=REPLICAS)
def test_an_upload_saved_as_the_api_pool_runs_dry_is_sent_once_by_two_relays(jq: Run, refapp: RefApp) -> None:
    job_id = job_id_for("p-dry-pool", "report.pdf")
    jq.faults.exhaust_pool(at=SUBMIT_AFTER_JOB_WRITE, match={"job_id": job_id}, timeout=5.0)
    assert refapp.submit(DOCUMENTS, project="p-dry-pool", file="report.pdf") == job_id
    job = refapp.wait_for(job_id, timeout=MARGIN)
    assert job["attempt"] == 1, job  # the second send found the job taken, and left it
