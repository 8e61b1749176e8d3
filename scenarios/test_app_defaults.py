"""The app's own per-call deadline, not the one the stack configures: a hung call ends at 120 s.

Every other scenario runs refapp with ``REFAPP_MODEL_DEADLINE_S`` set by the
stack's configuration, so the budget table's own ``model_call`` row (120 s,
chosen to keep the provider's 35 s p99 and stop a hung call long before the
600 s batch budget) is never what a worker uses. Here the workers run
without the setting (``app_defaults.own_model_deadline``).

The provider accepts the job's call and never answers. Right: the call
ends at the table's deadline (1.2 s at the test time scale), the document
fails ``timeout: model call exceeded 1.2s``, the job ends ``failed``. Bug
``model-deadline-over-batch-budget``: the table's per-call deadline was
raised to 660 s ("the slowest call on record took 11 minutes"), above the
batch's own 600 s soft limit, so the call is never ended by its deadline:
the batch budget ends the whole job instead, at 6 s here.
"""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from harness import Run
from refapp.submit import job_id_for
from scenarios.app_defaults import own_model_deadline, table_model_deadline
from scenarios.hang_support import record_item_outcomes
from scenarios.refapp_client import RefApp

SLACK = 0.1  # seconds: a job gives up its call within a few milliseconds of the deadline
BATCH_SOFT_LIMIT_S = 600  # refapp.process_job's soft limit (refapp/budgets.py), real seconds
MARGIN = 5.0  # seconds a wait may take on a busy machine


@pytest.fixture
def app_defaults(jq: Run) -> Iterator[None]:
    """The workers run on refapp's own default per-call deadline for this scenario."""
    yield from own_model_deadline(jq)


def on_time(deadline: float) -> dict[str, dict[str, Any]]:
    return {"deadline_honoured": {"deadline": deadline, "slack": SLACK},
            "timeout_labelled": {"deadline": deadline, "label": "timeout:"}}


DEADLINE_AT_TEST_SCALE = 1.2  # 120 s at the default time scale 0.01


@pytest.mark.catches("model-deadline-over-batch-budget", invariant="deadline_honoured")
@pytest.mark.jobquake(checks=["deadline_honoured", "timeout_labelled"], options=on_time(DEADLINE_AT_TEST_SCALE))
def test_a_hung_call_ends_at_the_apps_own_deadline(jq: Run, refapp: RefApp, app_defaults: None) -> None:
    """One document whose call hangs: it ends at the table's deadline, the job ``failed`` as a timeout.

    One document, so the job's whole run stays far inside the batch's soft
    limit (6 s here) however busy the machine: only a per-call deadline
    above that limit lets the limit end the job.
    """
    assert table_model_deadline(jq) == pytest.approx(DEADLINE_AT_TEST_SCALE), "the options assume this deadline"
    job_id = job_id_for("p-defaults", "hung.pdf")
    jq.faults.hang_endpoint(layer="provider", job_id=job_id)

    assert refapp.submit(["delivery note"], project="p-defaults", file="hung.pdf") == job_id
    # bounded past the batch's soft limit: a job the deadline did not end is ended by the batch budget
    job = refapp.wait_for(job_id, timeout=jq.scaled(BATCH_SOFT_LIMIT_S) + MARGIN)
    record_item_outcomes(jq, refapp)  # when the job gave up each call, for deadline_honoured
    assert job["state"] == "failed", job
