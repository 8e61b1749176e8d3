"""Crashes in the middle: a killed worker's task comes back; a relay that fails after sending sends again."""
from __future__ import annotations

import os
import signal
import sys

import httpx
import sqlalchemy as sa

from harness._wait import wait_until
from refapp import budgets, db, submit
from refapp.failpoints import RELAY_BETWEEN_SEND_AND_MARK
from tests.common import procs as _procs
from tests.refapp.conftest import Stack


def test_a_killed_workers_task_comes_back_after_the_visibility_window(stack: Stack) -> None:
    job_id = submit.job_id_for("p-crash", "scan.pdf")
    gate = httpx.post(f"{stack.paidapi_url}/_jobquake/gates", json={"job_id": job_id}, timeout=5).json()
    stack.submit(project="p-crash", file="scan.pdf", documents=["one", "two"])
    held = httpx.get(f"{stack.paidapi_url}/_jobquake/gates/{gate['gate_id']}/held", params={"timeout": 10},
                     timeout=15)
    assert held.status_code == 200, held.text

    _kill_and_replace_worker(stack)
    httpx.post(f"{stack.paidapi_url}/_jobquake/gates/{gate['gate_id']}/release", timeout=5)
    job = stack.wait_terminal(job_id, timeout=budgets.scaled("broker_visibility") + 10)

    assert (job["state"], job["attempt"]) == ("done", 2)


def _kill_and_replace_worker(stack: Stack) -> None:
    old = stack.procs["worker"]
    os.killpg(old.proc.pid, signal.SIGKILL)  # main process and prefork children: nothing acks
    old.stop()
    stack.procs["worker"] = _procs.start_app("worker", [sys.executable, "-m", "refapp.worker"],
                                             logdir=stack.logdir, env=stack.env, ready_line=" ready.")


def test_a_relay_that_fails_between_send_and_mark_sends_again_and_the_job_runs_once(stack: Stack) -> None:
    stack.failpoints.arm(RELAY_BETWEEN_SEND_AND_MARK, "raise", exception="RuntimeError", once=True)

    response = stack.submit(project="p-resend", file="a.pdf", documents=["one", "two"])
    job = stack.wait_terminal(response.json()["job_id"])

    # the second delivery found the job finished, or running under a live attempt, and left it alone
    wait_until(lambda: f"job {job['id']}: nothing to do" in stack.procs["worker"].log_text(), timeout=10,
               what="the repeated message to be dropped")
    assert (job["state"], job["attempt"]) == ("done", 1)
    assert sorted(c["step"] for c in stack.ledger(job_id=job["id"])) == ["doc-0.categorise", "doc-1.categorise"]
    with db.engine().connect() as conn:
        unsent = conn.scalar(sa.select(sa.func.count()).select_from(db.outbox)
                             .where(db.outbox.c.job_id == job["id"], db.outbox.c.sent_at.is_(None)))
    assert unsent == 0
