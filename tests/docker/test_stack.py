"""The whole stack on the docker backend: a job through a worker container and the paid API;
a worker container killed and paused."""
from __future__ import annotations

import signal

import pytest

from harness._wait import wait_until
from harness.errors import WaitTimeout
from harness.evidence.collect import collect
from tests.common.processes import alive, family
from tests.common.tiny import job_state, submit

pytestmark = pytest.mark.integration


def test_every_service_is_a_container(docker_tiny_stack, docker_client):
    names = {c.name for c in docker_client.containers.list()}
    for svc in docker_tiny_stack.services():
        assert svc.container_name in names, svc.name


def test_a_job_goes_through_a_worker_container_and_the_paid_api(tiny):
    submit(tiny, "job-1")
    wait_until(lambda: job_state(tiny, "job-1") == "done", timeout=20, what="job-1 done")
    calls = tiny.paidapi.billed("job-1")
    assert len(calls) == 1 and calls[0]["key"] == "job-1:label"
    tiny.settle(5)
    history, snapshot = collect(tiny)
    assert [e.data["state"] for e in history if e.source == "job"] == ["queued", "processing", "done"]
    assert snapshot.job("job-1").state == "done"
    assert "tiny.work" in tiny.workers[0].logs()
    # the worker container reported its task runs through the run's private instrumentation folder
    runs = [(e.type, e.name, e.data.get("task")) for e in history if e.source == "instrument"]
    assert ("invoke", "task", "tiny.work") in runs and ("ok", "task", "tiny.work") in runs


def test_killed_worker_container_takes_its_pool_along_and_is_replaced(docker_tiny_stack, tiny):
    worker = tiny.workers[0]
    old, members = worker.pid, family(worker.pid)
    assert len(members) >= 2, "a prefork worker has a main process and a child"
    tiny.workers.kill(0, signal.SIGKILL)
    assert not worker.is_running()
    wait_until(lambda: not any(alive(pid) for pid in members), timeout=10, what="every worker process gone")
    docker_tiny_stack.reset()
    assert tiny.workers[0].is_running() and tiny.workers[0].pid != old
    submit(tiny, "job-2")
    wait_until(lambda: job_state(tiny, "job-2") == "done", timeout=20, what="job-2 done on the new worker")


def test_paused_worker_container_does_nothing_until_resumed(tiny, docker_client):
    worker = tiny.workers[0]
    worker.pause()
    try:
        assert worker.is_running()
        assert docker_client.containers.get(worker.container_name).attrs["State"]["Paused"]
        submit(tiny, "job-3")
        with pytest.raises(WaitTimeout):  # bounded look for progress that must not happen
            wait_until(lambda: job_state(tiny, "job-3") != "queued", timeout=1.0, what="progress while paused")
    finally:
        worker.resume()
    wait_until(lambda: job_state(tiny, "job-3") == "done", timeout=20, what="job-3 done after resume")


def test_pause_fault_sees_the_container_frozen_and_heals(tiny):
    """The fault checks its effect (the cgroup freezer says FROZEN), then heals."""
    fault = tiny.faults.pause_service("worker1")
    assert fault.injected
    submit(tiny, "job-4")
    with pytest.raises(WaitTimeout):
        wait_until(lambda: job_state(tiny, "job-4") != "queued", timeout=1.0, what="progress while paused")
    fault.heal()
    wait_until(lambda: job_state(tiny, "job-4") == "done", timeout=20, what="job-4 done after heal")
