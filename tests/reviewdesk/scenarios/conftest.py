"""This project as its scenarios see it: how a job is submitted. Written by `jobquake init`."""
import pytest

from harness.appclient import AppClient

# found: contracts.services.submit_review writes to the job table; it runs in a process of its own,
# with the app's environment, as it would in production
SUBMIT = "contracts.services:submit_review"


def job_args(n: int) -> dict:
    """The arguments of job number ``n`` (each job a little different)."""
    return {
        'title': f"title {n}",
        'clauses': [f"clauses {n}, first"],
    }


@pytest.fixture
def app(jq):
    """Submit jobs (recorded in the run's history), read their rows, wait for their states."""
    if SUBMIT is None:
        pytest.skip("TODO(jobquake init): set SUBMIT in scenarios/conftest.py")
    client = AppClient(jq, submit=SUBMIT, job_args=job_args)
    yield client
    client.close()
