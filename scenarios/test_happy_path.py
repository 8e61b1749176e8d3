"""No fault at all: the baseline every other scenario departs from.

A user uploads three documents; each is normalised and categorised by one
paid model call; the job ends ``done``; the status events a browser
receives match the database; every call is billed exactly once.
"""
import pytest

from harness import Run
from scenarios.refapp_client import RefApp


@pytest.mark.jobquake(checks=["status_events_consistent"])
def test_an_upload_is_processed_and_billed_once(jq: Run, refapp: RefApp) -> None:
    events = refapp.listen()

    job_id = refapp.submit(["invoice from ACME", "hotel receipt", "train ticket"])

    job = refapp.wait_for(job_id, timeout=30)
    assert job["state"] == "done", job
    assert len(jq.paidapi.billed(job_id)) == 3
    assert events.states(job_id)[-1] == "done"
