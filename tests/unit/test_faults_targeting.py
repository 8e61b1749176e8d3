"""InFlight kills name their worker by the process that holds the call, or kill nobody."""
from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from harness.errors import FaultError
from harness.faults import InFlight, KillWorker
from harness._proc import process_tree
from harness.stack.worker import WorkerPool


class FakeWorker:
    def __init__(self, name: str, pid: int):
        self.name, self.pid = name, pid

    def is_running(self) -> bool:
        return True


def _sleeper():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    yield proc
    proc.kill()
    proc.wait()


child = pytest.fixture(_sleeper)
other = pytest.fixture(_sleeper)


class FakePool:
    """The pool's lookup, over workers that are this test's own processes."""

    holding = WorkerPool.holding

    def __init__(self, *workers: FakeWorker):
        self.workers = list(workers)


def kill_for(*workers: FakeWorker) -> KillWorker:
    fault = KillWorker(when=InFlight("j1"))
    fault.bind(SimpleNamespace(workers=FakePool(*workers)))
    return fault


def test_the_pool_names_the_worker_whose_tree_holds_a_pid(child, other):
    pool = FakePool(FakeWorker("worker1", other.pid), FakeWorker("worker2", os.getpid()))
    assert pool.holding(child.pid).name == "worker2"  # a child of this process
    assert pool.holding(other.pid).name == "worker1"
    assert FakePool(FakeWorker("worker1", other.pid)).holding(child.pid) is None


def test_the_process_tree_holds_the_pid_and_its_children(child):
    assert process_tree(os.getpid())[0] == os.getpid()
    assert child.pid in process_tree(os.getpid())


def test_the_worker_whose_tree_made_the_call_is_the_target(child, other):
    fault = kill_for(FakeWorker("worker-0", other.pid), FakeWorker("worker-1", os.getpid()))
    assert fault._holder_of({"call_id": 3, "job_id": "j1", "caller_pid": child.pid}) == 1


def test_a_call_without_a_caller_pid_kills_nobody():
    fault = kill_for(FakeWorker("worker-0", os.getpid()))
    with pytest.raises(FaultError, match="carries no X-Caller-Pid header; no worker was killed"):
        fault._holder_of({"call_id": 3, "job_id": "j1", "caller_pid": None})


def test_a_caller_in_no_worker_tree_kills_nobody(child):
    fault = kill_for(FakeWorker("worker-0", child.pid))
    with pytest.raises(FaultError, match=f"made by pid {os.getpid()}, which is in no running worker's"):
        fault._holder_of({"call_id": 3, "job_id": "j1", "caller_pid": os.getpid()})
