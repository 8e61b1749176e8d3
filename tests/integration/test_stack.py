"""The whole stack together: one job through a worker and the paid API, per-test reset, worker replacement."""
from __future__ import annotations

import signal

import pytest

from harness._wait import wait_until
from harness.evidence.collect import collect
from tests.common.tiny import job_state, submit

pytestmark = pytest.mark.integration


def test_a_job_goes_through_worker_and_paid_api(tiny):
    submit(tiny, "job-1")
    wait_until(lambda: job_state(tiny, "job-1") == "done", timeout=20, what="job-1 done")
    calls = tiny.paidapi.billed("job-1")
    assert len(calls) == 1 and calls[0]["key"] == "job-1:label"
    tiny.settle(5)
    history, snapshot = collect(tiny)
    assert [e.data["state"] for e in history if e.source == "job"] == ["queued", "processing", "done"]
    assert snapshot.job("job-1").state == "done"


def test_reset_gives_a_fresh_database_and_empty_ledger(tiny):
    assert job_state(tiny, "job-1") is None
    assert tiny.paidapi.ledger() == []


def test_killed_worker_is_replaced_at_reset(tiny_stack, tiny):
    old = tiny.workers[0].pid
    tiny.workers.kill(0, signal.SIGKILL)
    assert not tiny.workers[0].is_running()
    tiny_stack.reset()
    assert tiny.workers[0].is_running() and tiny.workers[0].pid != old
    submit(tiny, "job-2")
    wait_until(lambda: job_state(tiny, "job-2") == "done", timeout=20, what="job-2 done on the new worker")
