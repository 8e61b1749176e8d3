"""Invariant: a task's soft time limit ends it; the hard limit is never what stops it.

Celery gives a task two limits. At the soft one the task gets
``SoftTimeLimitExceeded`` and must wind down: record how far it got, fail
the job with a reason a person can read. The hard one is the backstop: the
worker kills the child process, and whatever the task was doing stops
mid-way, its job row left ``running`` until something else notices. A
task that reaches its hard limit therefore had its soft limit swallowed
(an ``except Exception`` around the work, a helper that turns the abort
into an item's error and carries on) or set too close to the hard one.

Evidence: the Celery workers' logs of the test, where the worker says
``Hard time limit (...) exceeded for <task>[<id>]`` (``worker ok
hard_time_limit`` events) and the harness records that it read them.
Excused: a kill while a fault stopped, froze or killed a worker process
during the task's last ``limit`` seconds (a frozen task cannot wind down).
Without the logs read, or with logs that show no task received (none ran,
or the log level hides Celery's INFO lines), ``unknown``: no kill in them
proves nothing.
"""
from __future__ import annotations

from harness.checks.landed import Window, windows
from harness.checks.liveness_faults import PROCESS_FAULTS, in_force
from harness.checks.needs import Missing, Need, last_read
from harness.checks.result import Result, invalid_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History
from harness.history.snapshot import Snapshot

NAME = "soft_limit_honoured"


def tasks_received(history: History) -> int | None:
    """Tasks the workers logged as received in this test; None when their logs were not read."""
    read = last_read(history, v.WORKER_LOG_SOURCE)
    return None if read is None else int(read.get("tasks_received") or 0)


def _read(history: History, snapshot: Snapshot | None) -> Missing | None:
    if history.by_source(v.WORKER, name=v.HARD_LIMIT):
        return None
    received = tasks_received(history)
    if received is None:
        return Missing("the workers' logs were not read for hard time limit kills")
    if received == 0:  # no task ran, or the log level hides Celery's INFO lines: no kill proves nothing
        return Missing("the workers' logs show no task received in this test")
    return None


WORKER_LOGS = Need("worker_logs", "the Celery workers' logs, read for tasks killed at their hard time limit", _read)


def _stops_worker(window: Window, worker: str) -> bool:
    """The fault killed, stopped or froze ``worker`` (any worker, when it does not say which)."""
    if window.fault == "kill_worker":
        named = [n for n in str(window.details.get("worker") or "").split(",") if n]
    elif window.fault in PROCESS_FAULTS and window.details.get("role") == "worker":
        named = [str(window.params["service"])] if window.params.get("service") else []
    else:
        return False
    return not named or worker in named


def _excused(kill: Event, faults: list[Window]) -> bool:
    start = kill.t - float(kill.data.get("limit_s") or 0.0)
    worker = str(kill.data.get("worker"))
    return any(_stops_worker(w, worker) and in_force(w, start, kill.t) for w in faults)


@invariant(NAME, needs=(WORKER_LOGS,))
def soft_limit_honoured(history: History, snapshot: Snapshot | None) -> Result:
    """No task ran into its hard time limit (unless a fault froze or stopped its worker meanwhile)."""
    kills = history.by_source(v.WORKER, name=v.HARD_LIMIT)
    faults = windows(history)
    unexcused = [k for k in kills if not _excused(k, faults)]
    if unexcused:
        shown = [{"task": k.data.get("task"), "task_id": k.data.get("task_id"), "worker": k.data.get("worker"),
                  "limit_s": k.data.get("limit_s"), "at": history.relative(k.t)} for k in unexcused]
        first = shown[0]
        return invalid_result(NAME, f"{len(unexcused)} task run(s) killed at the hard time limit: the soft "
                              f"limit did not end them; first: {first['task']}[{first['task_id']}] on "
                              f"{first['worker']} at {first['at']:.2f}s ({first['limit_s']:g}s hard limit)",
                              shown)
    excused = len(kills) - len(unexcused)
    note = f" ({excused} kill(s) excused: a fault froze or stopped the worker)" if excused else ""
    received = tasks_received(history) or 0
    return valid_result(NAME, f"{received} task(s) received, none ran into its hard time limit{note}",
                        excused=excused, tasks=received)
