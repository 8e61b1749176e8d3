"""Submission: fast checks, one transaction for job and outbox message, a stable job id."""
from __future__ import annotations

import subprocess
import sys

import pytest
import sqlalchemy as sa

from refapp import db, submit
from refapp.failpoints import SUBMIT_BEFORE_COMMIT
from tests.refapp.conftest import Stack


def _rows(job_id: str) -> tuple[int, int]:
    with db.engine().connect() as conn:
        jobs = conn.scalar(sa.select(sa.func.count()).select_from(db.jobs).where(db.jobs.c.id == job_id))
        messages = conn.scalar(sa.select(sa.func.count()).select_from(db.outbox).where(db.outbox.c.job_id == job_id))
    return jobs, messages


def _submission(file: str) -> submit.Submission:
    return submit.Submission(project="p-outbox", file=file, user="alice", kind="documents", route="celery",
                             payloads=("one", "two"))


def test_a_failure_inside_the_submit_transaction_leaves_neither_row(stack: Stack) -> None:
    stack.failpoints.arm(SUBMIT_BEFORE_COMMIT, "raise", exception="RuntimeError", once=True)

    with pytest.raises(RuntimeError):
        submit.submit(_submission("atomic.pdf"))

    assert _rows(submit.job_id_for("p-outbox", "atomic.pdf")) == (0, 0)


def test_an_accepted_job_has_exactly_one_outbox_message(stack: Stack) -> None:
    job_id, created = submit.submit(_submission("accepted.pdf"))

    assert created
    assert _rows(job_id) == (1, 1)
    assert stack.wait_terminal(job_id)["state"] == "done"


def test_the_same_upload_twice_is_one_job_run_once(stack: Stack) -> None:
    body = {"project": "p-twice", "file": "scan.pdf", "documents": ["invoice 7", "receipt 9"]}

    first, second = stack.submit(**body), stack.submit(**body)

    assert (first.status_code, second.status_code) == (202, 202)
    assert first.json()["job_id"] == second.json()["job_id"]
    assert (first.json()["created"], second.json()["created"]) == (True, False)
    job_id = first.json()["job_id"]
    assert _rows(job_id) == (1, 1)
    assert stack.wait_terminal(job_id)["state"] == "done"
    assert len(stack.ledger(job_id=job_id)) == 2


def test_job_id_is_stable_per_project_and_file() -> None:
    assert submit.job_id_for("p", "a.pdf") == submit.job_id_for("p", "a.pdf")
    assert submit.job_id_for("p", "a.pdf") != submit.job_id_for("p", "b.pdf")
    assert submit.job_id_for("p", "a.pdf") != submit.job_id_for("q", "a.pdf")


@pytest.mark.parametrize(("body", "status"), [
    ({"project": "p", "file": "f", "documents": ["x"]}, 401),
    ({"project": "p", "file": "f", "documents": ["x"], "user": "mallory"}, 403),
    ({"project": "p", "file": "f", "documents": ["x"] * 21, "user": "alice"}, 413),
    ({"project": "p", "file": "f", "documents": [], "user": "alice"}, 400),
    ({"project": "p", "file": "f", "kind": "import", "csv": "a,b\n1,2", "user": "alice"}, 400),
    ({"project": "p", "file": "f", "documents": ["x"], "route": "carrier-pigeon", "user": "alice"}, 400),
])
def test_fast_checks_answer_4xx_and_save_nothing(stack: Stack, body: dict, status: int) -> None:
    import httpx

    response = httpx.post(f"{stack.api_url}/jobs", json=body, timeout=5)

    assert response.status_code == status, response.text
    assert "error" in response.json()
    assert _rows(submit.job_id_for("p", "f")) == (0, 0)


def test_unknown_job_is_404(stack: Stack) -> None:
    import httpx

    assert httpx.get(f"{stack.api_url}/jobs/no-such-job", timeout=5).status_code == 404


def test_an_unknown_mutant_stops_a_process_at_start(stack: Stack) -> None:
    env = {**stack.env, "REFAPP_MUTANT": "acks-early,no-such-bug"}

    done = subprocess.run([sys.executable, "-m", "refapp.relay"], env=env, capture_output=True, text=True,
                          timeout=30)

    assert done.returncode == 2
    assert "no-such-bug" in done.stderr and "swallow-soft-limit" in done.stderr
