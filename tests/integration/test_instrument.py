"""The instrumentation in an app that knows nothing of jobquake (``tests/plainapp``).

Its tasks call the paid API with plain httpx and requests and send no
header of their own: the ledger must still show each call's job, attempt
and the pid of the worker child that made it. Framework failpoints work
without a line of jobquake in the app: ``exhaust_pool`` at
``sqlalchemy.after_commit`` leaves the app's next checkout to time out.
"""
from __future__ import annotations

from pathlib import Path

import httpx
import psycopg
import pytest
from celery import Celery

from harness._wait import wait_until
from harness.config import resolve
from harness.run import Run
from harness.stack import reaper
from harness.stack.stack import Stack
from harness.evidence.collect import collect
from tests.common.runs import per_test_run

pytestmark = pytest.mark.integration

PLAINAPP = Path(__file__).parent.parent / "plainapp"


@pytest.fixture(scope="module")
def plain_stack():
    stack = Stack(resolve(environ={}, pyproject=PLAINAPP / "pyproject.toml"), reaper.run_dir() / "plain-stack")
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture
def plain(plain_stack, tmp_path):
    with per_test_run(plain_stack, tmp_path / "artifacts", "plain") as run:
        yield run


def submit(run: Run, task: str, item_id: str) -> None:
    with psycopg.connect(run.database_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO work_items (item_id, status) VALUES (%s, 'new')", (item_id,))
    Celery(broker=run.redis_url).send_task(task, args=[item_id])


def item(run: Run, item_id: str) -> dict | None:
    with psycopg.connect(run.database_dsn, autocommit=True) as conn:
        row = conn.execute("SELECT status, worker_pid, tries FROM work_items WHERE item_id = %s",
                           (item_id,)).fetchone()
    return None if row is None else {"status": row[0], "worker_pid": row[1], "tries": row[2]}


def wait_status(run: Run, item_id: str, status: str, timeout: float = 20) -> dict:
    return wait_until(lambda: (row := item(run, item_id)) and row["status"] == status and row,
                      timeout=timeout, what=f"{item_id} {status}")


@pytest.mark.parametrize("task, route", [("plain.with_httpx", "/v1/classify"),
                                         ("plain.with_requests", "/v1/summarize")])
def test_each_paid_call_carries_its_job_attempt_and_worker_child_pid(plain, task, route):
    submit(plain, task, "item-1")
    row = wait_status(plain, "item-1", "finished")
    [call] = plain.paidapi.ledger()
    assert (call["route"], call["job_id"], call["attempt"]) == (route, "item-1", 1)
    assert call["caller_pid"] == row["worker_pid"]
    assert call["caller_pid"] != plain.workers[0].pid  # the pool child, not the worker's main process


def test_a_retry_is_attempt_two(plain):
    submit(plain, "plain.retried", "item-2")
    wait_status(plain, "item-2", "finished")
    calls = plain.paidapi.ledger()
    assert [(c["job_id"], c["attempt"]) for c in calls] == [("item-2", 1), ("item-2", 2)]
    runs = [r for r in plain_stack_events(plain) if r["name"] == "task" and r["type"] == "invoke"]
    assert [(r["attempt"], r["data"]["retries"]) for r in runs] == [(1, 0), (2, 1)]


def plain_stack_events(run: Run) -> list[dict]:
    return run.stack.instrument.records()


def test_exhaust_pool_after_commit_makes_the_next_checkout_fail(plain):
    fault = plain.faults.exhaust_pool("sqlalchemy.after_commit", match={"job_id": "item-3"})
    submit(plain, "plain.write_then_read", "item-3")
    [trigger] = fault.wait(timeout=20)
    assert trigger["context"]["job_id"] == "item-3" and trigger["context"]["attempt"] == 1
    worker = plain.workers[0]
    wait_until(lambda: "QueuePool limit of size 2 overflow 0 reached" in worker.logs(), timeout=20,
               what="the app's next checkout to time out")
    assert item(plain, "item-3")["status"] == "running"  # written, then nothing more could be


def test_framework_failpoints_carry_the_job_context(plain):
    armed = {name: plain.faults.failpoint(name, "sleep", seconds=0) for name in (
        "celery.task_prerun", "celery.before_publish", "http.before_paid_call", "sqlalchemy.pool_checkout",
        "celery.task_postrun")}
    submit(plain, "plain.retried", "item-4")
    wait_status(plain, "item-4", "finished")
    publish = armed["celery.before_publish"].wait(timeout=5)[0]["context"]
    assert (publish["job_id"], publish["attempt"], publish["published_task"]) == ("item-4", 1, "plain.retried")
    assert publish["process"] == "worker1"
    paid = [t["context"] for t in armed["http.before_paid_call"].wait(timeout=5, count=2)]
    assert [(c["job_id"], c["attempt"], c["method"]) for c in paid] == [("item-4", 1, "POST"), ("item-4", 2, "POST")]
    assert paid[0]["url"].endswith("/v1/classify")
    for name in ("celery.task_prerun", "celery.task_postrun"):
        assert [t["context"]["attempt"] for t in armed[name].wait(timeout=5, count=2)] == [1, 2]
    assert armed["sqlalchemy.pool_checkout"].wait(timeout=5)[0]["context"]["job_id"] == "item-4"


def test_task_runs_reach_the_history_and_the_snapshot_shows_each_jobs_age(plain):
    submit(plain, "plain.with_httpx", "item-5")
    wait_status(plain, "item-5", "finished")
    plain.settle(10)  # raises SettleTimeout at the bound
    history, snapshot = collect(plain)
    runs = [(e.type, e.name, e.job_id, e.attempt) for e in history if e.source == "instrument"]
    assert runs == [("invoke", "task", "item-5", 1), ("ok", "task", "item-5", 1)]
    row = snapshot.job("item-5")
    assert row.state == "finished" and 0 <= snapshot.taken_at_wall - row.updated_at < 30


def test_pool_exhausted_between_the_job_write_and_the_enqueue_in_an_app_process(plain):
    fault = plain.faults.exhaust_pool("sqlalchemy.after_commit", match={"process": "submitter"})
    publish = plain.faults.failpoint("celery.before_publish", "sleep", seconds=0, match={"process": "submitter"})
    answer = httpx.post(plain.values["submitter_url"] + "/submit/item-6", timeout=20)
    assert answer.status_code == 500 and "QueuePool limit of size 2 overflow 0 reached" in answer.text
    [trigger] = fault.triggers()
    assert trigger["pid"] == plain.stack.processes["submitter"].pid and "job_id" not in trigger["context"]
    [sent] = publish.triggers()
    assert (sent["context"]["job_id"], sent["context"]["published_task"]) == ("item-6", "plain.with_httpx")
    wait_status(plain, "item-6", "finished")  # the worker has its own pool: the job still runs


def test_a_raise_at_before_publish_reaches_the_publisher(plain):
    plain.faults.failpoint("celery.before_publish", "raise", exception="ConnectionError", message="broker gone",
                           match={"process": "submitter"})
    answer = httpx.post(plain.values["submitter_url"] + "/submit/item-7", timeout=20)
    assert (answer.status_code, answer.text) == (500, "ConnectionError: broker gone")
    assert item(plain, "item-7")["status"] == "new"  # written, never enqueued


def test_an_app_that_does_not_say_its_attempt_gets_no_writer_attempt(plain):
    # Celery's delivery count is not the app's attempt number: the harness does not say it for the app
    submit(plain, "plain.retried", "item-9")
    wait_status(plain, "item-9", "finished")
    plain.settle(10)  # raises SettleTimeout at the bound
    history, _ = collect(plain)
    writers = [e.data.get("writer_attempt") for e in history
               if e.source == "job" and e.name == "state" and e.job_id == "item-9"]
    assert len(writers) >= 3 and set(writers) == {None}
