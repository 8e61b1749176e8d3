"""The network between the app and its paid provider: gone for a while, or slower than the deadline.

Both on the SQS path, where the queue is the retry, with two users' jobs at
once and the sweeper on:

* **the provider's address refuses connections** (``proxy_down``) while the
  first attempts run: each call fails at once (``error: provider
  unreachable``), each attempt goes back to the queue, and once the
  network is back the next attempts finish. Nothing was generated, so
  nothing is billed twice.
* **every answer arrives later than the deadline** (``network_toxic``: a
  latency toxic on the way back): the provider generates and bills, the app
  has stopped waiting. Every retry asks again with the same idempotency
  key, so the provider replays instead of billing again; after the code's
  last attempt each job ends ``failed`` as a timeout. Bug
  ``fresh-idempotency-key``: each attempt is billed again.
"""
from __future__ import annotations

import pytest

from harness import Run, wait_until
from scenarios import sqs_support as sqs
from scenarios.many_users import UPLOADS, submit_all
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
TWO_USERS = UPLOADS[:2]


def test_calls_refused_while_the_providers_address_is_down_are_retried_once_it_is_back(jq: Run, refapp: RefApp) -> None:
    """Two users' SQS jobs: their first attempts find the provider unreachable, later ones finish."""
    down = jq.faults.proxy_down("paidapi")
    jobs = submit_all(refapp, TWO_USERS, route="sqs")
    # each job's first attempt failed and went back to the queue (attempts remain)
    wait_until(lambda: all((j := refapp.job(job_id))["attempt"] >= 1 and j["state"] == "queued"
                           for job_id in jobs), timeout=MARGIN, what="every first attempt to fail and be requeued")
    down.heal()

    for job_id in jobs:
        assert refapp.wait_for(job_id, timeout=3 * (sqs.redelivery_bound(jq) + MARGIN))["state"] == "done"


@pytest.mark.catches("fresh-idempotency-key", invariant="no_double_billing")
@pytest.mark.jobquake(settle=False)  # settled below, within the retries' own bound
def test_answers_slower_than_the_deadline_are_billed_once_however_often_the_job_retries(
        jq: Run, refapp: RefApp) -> None:
    """Every answer reaches the app 1.5 deadlines late: billed once per step, failed as a timeout."""
    late = round(1.5 * sqs.model_deadline(jq) * 1000)
    jq.faults.network_toxic("paidapi", "latency", latency=late)
    jobs = submit_all(refapp, TWO_USERS, route="sqs")

    deliveries = 3 + 1  # REFAPP_MAX_ATTEMPTS, then the delivery where the code gives up
    per_delivery = sqs.model_deadline(jq) + sqs.redelivery_bound(jq) + 1.0
    jq.settle(timeout=deliveries * per_delivery + MARGIN)  # bug: SettleTimeout, the verdict names the job
    for job_id in jobs:
        job = refapp.job(job_id)
        assert job["state"] == "failed" and job["reason"].startswith("timeout:"), job
