"""A short provider outage costs one attempt, not all of them: retries keep their spacing.

On the SQS path a failed attempt gives its job back to the queue, and the
queue offers it again after ``sqs_retry_backoff``; the job is given up after
``REFAPP_MAX_ATTEMPTS`` attempts. The backoff is what lets a short outage
pass: attempts back to back would all meet it.

The provider fails the job's calls (500) until attempt 1 has failed and
given the job back; then it is healthy again. Right: attempt 2 starts a
backoff later and finishes the job, ``done`` at attempt 2. Bug
``retry-without-backoff``: the message is given back at once, attempt 2
(and 3) run into the same outage, and the job can be given up for an
outage that lasted a moment.

``retries_keep_spacing_and_budget`` (switched on by the app's declared
policy, ``limits()["retries"]``, and a retry in the state log) judges the
gap between each give-back and the next attempt, and the attempts of every
job given up (``test_sqs.py``'s job that always fails is given up after
exactly its declared attempts; bug ``give-up-one-early``: after one fewer).
"""
from __future__ import annotations

import re

import pytest

from harness import Run, wait_until
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
INVARIANT = "retries_keep_spacing_and_budget"
GIVEN_BACK = re.compile(r"on attempt \d+$")  # the reason an SQS attempt leaves when it gives its job back


@pytest.mark.catches("retry-without-backoff", invariant=INVARIANT)
@pytest.mark.jobquake(checks=[INVARIANT])
def test_a_short_provider_outage_costs_one_attempt(jq: Run, refapp: RefApp) -> None:
    """The provider fails until attempt 1 gave the job back; attempt 2, a backoff later, finishes it."""
    job_id = job_id_for("p-short-outage", "scan.pdf")
    outage = jq.faults.paidapi_mode("fail", job_id=job_id)
    assert refapp.submit(["hotel receipt"], route="sqs", project="p-short-outage", file="scan.pdf") == job_id

    wait_until(lambda: GIVEN_BACK.search(refapp.job(job_id)["reason"] or ""), timeout=MARGIN,
               what="attempt 1 to fail and give the job back")
    outage.heal()  # the outage is over before the backoff is
    job = refapp.wait_for(job_id, timeout=3 * sqs.redelivery_bound(jq) + MARGIN)
    assert (job["state"], job["attempt"]) == ("done", 2), job
