"""This project as its scenarios see it: how a job is submitted. Written by `jobquake init`."""
import pytest

from harness.appclient import AppClient

# found: tickets.intake.open_ticket writes a new support_tickets row; it runs in a process of its own,
# with the app's environment, as it would in production
SUBMIT = "tickets.intake:open_ticket"
# the submit function takes no database session
SESSION = None


def job_args(n: int) -> dict:
    """The arguments of job number ``n`` (each job a little different)."""
    return {
        'customer': f"customer {n}",
        'subject': f"subject {n}",
        'messages': [f"messages {n}, first"],
    }


@pytest.fixture
def app(jq):
    """Submit jobs (recorded in the run's history), read their rows, wait for their states."""
    if SUBMIT is None:
        pytest.skip("TODO(jobquake init): set SUBMIT in scenarios/conftest.py")
    client = AppClient(jq, submit=SUBMIT, job_args=job_args, session=SESSION)
    yield client
    client.close()
