"""A worker pool replaced from two threads at once leaves no worker running outside the pool."""
from __future__ import annotations

import threading
from pathlib import Path

from harness.stack.worker import WorkerPool

OVERLAP_WAIT_S = 1.0  # how long a start waits for another start to begin beside it


class FakeWorker:
    """Stands in for a Celery worker: records starts and stops; a start waits to see if another overlaps."""

    created: list["FakeWorker"] = []
    starting = threading.Event()

    def __init__(self, name: str, **_: object):
        self.name, self.pid, self.running, self.stopped = name, None, False, False
        FakeWorker.created.append(self)

    def is_running(self) -> bool:
        return self.running

    def start(self) -> None:
        if FakeWorker.starting.is_set():
            return self._up()
        FakeWorker.starting.set()
        # the first start in progress holds on until a second one begins, or the wait ends: without
        # a pool lock both replace the same slot, with it the second waits for the first
        threading.Event().wait(OVERLAP_WAIT_S)
        self._up()

    def _up(self) -> None:
        self.running, self.pid = True, 1000 + len(FakeWorker.created)

    def stop(self) -> None:
        self.running, self.stopped = False, True


def test_two_threads_replacing_the_same_dead_worker_leave_no_orphan(tmp_path: Path) -> None:
    FakeWorker.created, FakeWorker.starting = [], threading.Event()
    pool = WorkerPool(factory=FakeWorker, command="celery -A app worker --pool prefork", values={}, count=1,
                      workdir=tmp_path, env={})
    assert not pool[0].is_running()  # the worker is "dead": both callers below want to replace it
    callers = [threading.Thread(target=pool.replace_dead), threading.Thread(target=lambda: pool.replace(0))]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join(10)
    running = [w for w in FakeWorker.created if w.is_running()]
    assert running == [pool[0]], f"running outside the pool: {[w for w in running if w is not pool[0]]}"
