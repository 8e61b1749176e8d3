"""This project as its scenarios see it: how a job is submitted. Written by `jobquake init`."""
import pytest

from harness.appclient import AppClient

# found: recaps.service.submit_recap writes a new recaps row; it runs in a process of its own,
# with the app's environment, as it would in production
SUBMIT = "recaps.service:submit_recap"
# found: recaps.db:SessionLocal makes the app's database sessions: the submit function takes one
SESSION = "recaps.db:SessionLocal"


def job_args(n: int) -> dict:
    """The arguments of job number ``n`` (each job a little different)."""
    return {
        'request': {'title': f"title {n}", 'transcript': f"transcript {n}"},
    }


@pytest.fixture
def app(jq):
    """Submit jobs (recorded in the run's history), read their rows, wait for their states."""
    if SUBMIT is None:
        pytest.skip("TODO(jobquake init): set SUBMIT in scenarios/conftest.py")
    client = AppClient(jq, submit=SUBMIT, job_args=job_args, session=SESSION)
    yield client
    client.close()
