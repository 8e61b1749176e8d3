"""What Celery's workers say in their logs that nothing else records: tasks killed at their hard time limit.

A Celery prefork worker enforces a task's limits itself. The soft limit
raises ``SoftTimeLimitExceeded`` inside the task, which the code must let
end the task; the hard limit is the backstop: the pool kills the child
process and the main process logs, at ERROR::

    Hard time limit (9.0s) exceeded for refapp.process_job[4b6c4db2-...]

No signal or result tells a watcher that much (the killed child sends no
``task_postrun`` it could be trusted for), so the line is the evidence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

# "[2026-12-01 23:04:59,129: ERROR/MainProcess] Hard time limit (9.0s) exceeded for task.name[task-id]"
_HARD_LIMIT = re.compile(
    r"^\[(?P<stamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}):[^\]]*\] Hard time limit "
    r"\((?P<limit>[0-9.]+)s\) exceeded for (?P<task>[^\[\s]+)\[(?P<task_id>[^\]]+)\]", re.MULTILINE)


# "[...: INFO/MainProcess] Task refapp.process_job[4b6c4db2-...] received" (Celery's INFO line per task)
_RECEIVED = re.compile(r"^\[[^\]]*\] Task [^\[\s]+\[[^\]]+\] received", re.MULTILINE)


@dataclass(frozen=True)
class HardLimitKill:
    """A task run the worker killed at its hard time limit (``wall``: the log line's time, epoch seconds)."""

    worker: str
    task: str
    task_id: str
    limit_s: float
    wall: float


def hard_limit_kills(worker: str, text: str) -> list[HardLimitKill]:
    """Every hard-limit kill logged in ``text`` (a worker's log; its times are the machine's local time)."""
    return [HardLimitKill(worker, m["task"], m["task_id"], float(m["limit"]),
                          datetime.strptime(m["stamp"], "%Y-%m-%d %H:%M:%S,%f").timestamp())
            for m in _HARD_LIMIT.finditer(text)]


def tasks_received(text: str) -> int:
    """How many tasks the worker logged as received (INFO): what the absence of kills is measured against."""
    return len(_RECEIVED.findall(text))
