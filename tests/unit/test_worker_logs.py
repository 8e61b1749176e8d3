"""Celery's hard-limit log line, read back as evidence."""
from __future__ import annotations

from datetime import datetime

from harness.evidence import hard_limit_kills, tasks_received

LOG = """\
[2026-12-01 23:04:50,004: INFO/MainProcess] Task refapp.process_job[4b6c4db2-5646] received
[2026-12-01 23:04:56,124: WARNING/ForkPoolWorker-2] job 10e5: item 3 failed: error: SoftTimeLimitExceeded()
[2026-12-01 23:04:59,129: ERROR/MainProcess] Hard time limit (9.0s) exceeded for refapp.process_job[4b6c4db2-5646]
[2026-12-01 23:05:01,000: ERROR/MainProcess] Process 'ForkPoolWorker-2' pid:29498 exited with 'signal 9 (SIGKILL)'
[2026-12-01 23:06:21,730: ERROR/MainProcess] Hard time limit (3.6s) exceeded for refapp.sweep_overdue[6cee85d8]
"""


def test_each_hard_limit_kill_is_read_with_its_task_limit_and_time():
    kills = hard_limit_kills("worker1", LOG)
    assert [(k.task, k.task_id, k.limit_s, k.worker) for k in kills] == [
        ("refapp.process_job", "4b6c4db2-5646", 9.0, "worker1"), ("refapp.sweep_overdue", "6cee85d8", 3.6, "worker1")]
    assert kills[0].wall == datetime(2026, 12, 1, 23, 4, 59, 129000).timestamp()


def test_a_log_without_the_line_has_no_kill():
    assert hard_limit_kills("worker1", LOG.splitlines()[1] + "\nHard time limit mentioned in passing\n") == []


def test_the_tasks_received_are_counted():
    assert tasks_received(LOG) == 1
    assert tasks_received("Task refapp.process_job[x] received, said nobody") == 0
