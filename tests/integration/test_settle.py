"""Settling on the broker, keeping tests apart, and dating writes, on the tiny app's stack."""
from __future__ import annotations


import httpx
import psycopg
import pytest
from celery import Celery

from harness import SettleTimeout, wait_until
from harness.checks.done_steps import STEP_SAVED, no_paid_call_for_done_step
from harness.history import vocabulary as v
from harness.history.timing import commit_time, committed_data, statement_time
from harness.isolation import isolate, transports
from harness.pending.broker import read_redis_broker
from harness.pending.verdict import settle_result
from harness.evidence.collect import collect
from tests.common.tiny import job_state

pytestmark = pytest.mark.integration


def submit_retry(run, job_id: str, countdown: float) -> None:
    """A job that goes 'failed' (terminal), then a retry ``countdown`` s later makes it 'done'."""
    with psycopg.connect(run.database_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (id, state) VALUES (%s, 'queued')", (job_id,))
    run.record.submission(job_id, status=202)
    Celery(broker=run.redis_url).send_task("tiny.retry_later", args=[job_id, countdown])


def scheduled(run) -> list:
    with run.stack.redis.client() as client:
        return [i for i in read_redis_broker(client) if i.kind == "scheduled delivery"]


def test_a_retry_scheduled_after_the_body_is_waited_for(tiny):
    submit_retry(tiny, "r-1", countdown=1.0)
    wait_until(lambda: job_state(tiny, "r-1") == "failed", timeout=20, what="r-1 failed")
    # every job is terminal and no call runs: the retry only shows in the broker
    [held] = wait_until(lambda: scheduled(tiny), timeout=5, what="the retry held by the worker")
    assert "tiny.retry_later" in held.detail and "eta=" in held.detail and held.since is not None

    assert tiny.settle(15).settled
    assert job_state(tiny, "r-1") == "done"
    assert [c["job_id"] for c in tiny.paidapi.billed()] == ["r-1"]
    assert tiny.settle_outcome.waited > 0.3  # it did wait for the countdown


def test_a_retry_still_scheduled_at_the_deadline_is_reported_then_removed(tiny):
    submit_retry(tiny, "r-2", countdown=60)
    wait_until(lambda: scheduled(tiny), timeout=20, what="the retry held by the worker")

    with pytest.raises(SettleTimeout) as caught:
        tiny.settle(0.5)
    assert caught.value.outcome is tiny.settle_outcome and caught.value.seen is caught.value.outcome
    result = settle_result(tiny.settle_outcome)
    assert result is not None and result.valid is False
    # what, where and since when
    assert "scheduled delivery in redis 'unacked'" in result.message and "tiny.retry_later" in result.message
    assert "(for " in result.message

    done = isolate(tiny, tiny.settler.read_all())
    assert done["stopped"] == ["worker1"]  # it held the retry in memory
    assert transports(tiny.stack) == []
    assert tiny.paidapi.billed() == []


def test_a_write_after_a_slow_call_in_one_transaction_is_not_dated_before_it(tiny):
    """``now()`` dates the result before the call that produced it; statement and commit time do not."""
    tiny.paidapi.set_mode("slow", job_id="long", seconds=30)  # 0.3 s at the tests' time scale
    with psycopg.connect(tiny.database_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE results (job_id text PRIMARY KEY, created_at timestamptz DEFAULT now())")
    with psycopg.connect(tiny.database_dsn) as conn:  # one transaction around the call
        conn.execute("INSERT INTO jobs (id, state) VALUES ('long', 'running')")
        httpx.post(tiny.values["paidapi_direct_url"] + "/v1/generate", json={"prompt": "long"}, timeout=10,
                   headers={"Idempotency-Key": "long:label", "X-Job-Id": "long", "X-Step": "label"})
        conn.execute("INSERT INTO results (job_id) VALUES ('long')")
        conn.execute("UPDATE jobs SET state = 'done' WHERE id = 'long'")
    record_saved(tiny)
    history, snapshot = collect(tiny)

    [call] = [e for e in history.by_source(v.PAIDAPI) if e.type == "invoke"]
    [saved] = history.by_source(v.WRITE, name=STEP_SAVED)
    done = next(e for e in history.by_job("long") if e.source == v.JOB and e.data.get("state") == "done")
    assert saved.t < call.t  # the transaction's start: the impossible order the checker used to claim
    assert statement_time(done) > call.t and commit_time(done) >= statement_time(done)
    assert commit_time(saved) > call.t
    result = no_paid_call_for_done_step(history, snapshot)
    assert result.valid is True, result.message


def record_saved(run) -> None:
    """The results rows as ``step_saved`` events, dated like ``created_at`` (``now()``), with commit times."""
    with psycopg.connect(run.database_dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT job_id, extract(epoch FROM created_at)::float8, "
                            "extract(epoch FROM pg_xact_commit_timestamp(xmin))::float8 FROM results").fetchall()
    for job_id, created, committed in rows:
        run.history.record(v.WRITE, "ok", STEP_SAVED, job_id=job_id, attempt=1,
                           data={"step": "label", "table": "results", **committed_data(committed)},
                           wall=created)
