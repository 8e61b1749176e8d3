"""The one table of time budgets: real seconds, each with the reason somebody chose it.

Every wait, deadline and time limit in refapp comes from here, multiplied by
``REFAPP_TIME_SCALE`` (a test at 0.01 runs a 600 s budget in 6 s). A floor
keeps a few process-level intervals above what the OS scheduler can honour
at a small scale: scaling shrinks the work, not the machine.

Celery task limits: every task declares its budget in its decorator
(``task_limits``), from its own row or, failing that, from ``task:default``.
No task is left to a worker-wide default and the worker command sets no
time limit, so reading this table tells the truth about every task.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from refapp import settings
from refapp.mutants import mutant


@dataclass(frozen=True)
class Budget:
    """A budget in real seconds; task rows also have a hard limit (``seconds`` is the soft one)."""

    seconds: float
    reason: str
    hard: float | None = None
    floor: float = 0.0


BUDGETS: dict[str, Budget] = {
    # -- Celery tasks ---------------------------------------------------------------
    "task:default": Budget(
        600, hard=900,
        reason="batch work nobody waits on: a 95-document upload at the ~5.5 s median model call "
               "needs ~520 s; the 300 s between soft and hard limit is for recording progress"),
    "task:refapp.sweep_overdue": Budget(
        300, hard=360,
        reason="runs hourly over a few thousand invoices at ms each; a sweep still running after "
               "5 min is stuck, and 60 s is ample to record how far it got"),
    # -- calls and waits ------------------------------------------------------------
    "model_call": Budget(
        120, reason="provider p99 is ~35 s and the slowest call seen ~11 min: 120 s keeps the tail "
                    "and stops a hung call long before the batch budget"),
    "row_lock_wait": Budget(
        5, floor=0.2, reason="a sweep row locked longer than this is being edited: skip it, the next run "
                             "gets it; the sweep's 300 s are for rows, not for waiting on one"),
    "submit_deadline": Budget(
        30, floor=5.0, reason="a user waits on this answer and a load balancer gives up at 60 s: a save still "
                              "running after this long is stuck, so the user is told to try again, and the save "
                              "may no longer commit"),
    "db_pool_wait": Budget(
        30, floor=1.0, reason="a request or task waiting longer for a connection should fail loudly"),
    "claim_retry_delay": Budget(
        60, floor=1.0, reason="a task whose claim found the database gone (a restart, every slot taken) runs "
                              "again after this pause; three of them outlast a restart"),
    "db_idle_in_transaction": Budget(
        30, floor=1.0, reason="an attempt's transaction waits on nothing but the database while it holds its "
                              "job's row; one idle this long is a frozen process's, whose lock would hold up "
                              "the sweeper and the next claim until it woke: the database ends it"),
    "reference_recheck": Budget(
        60, floor=0.05, reason="the category table changes only by migration; a minute of staleness is fine"),
    # -- liveness -------------------------------------------------------------------
    "heartbeat_interval": Budget(
        10, floor=0.05, reason="a running attempt proves it is alive this often"),
    "heartbeat_stale": Budget(
        60, floor=1.0, reason="six missed beats: the attempt is dead or wedged, not merely slow"),
    "sweeper_interval": Budget(
        30, floor=0.1, reason="abandoned jobs are found within a minute of going stale"),
    "queued_too_long": Budget(
        1800, floor=2.0, reason="a job queued this long behind no backlog was lost on the way; send it again"),
    # -- queues ---------------------------------------------------------------------
    "broker_visibility": Budget(
        960, floor=2.0, reason="longer than the longest hard limit (900 s), so a healthy task is never "
                               "handed to a second worker; a dead worker's task comes back after this"),
    # the floor: each look is a locked Redis sweep per worker; ten a second made idle workers the stack's
    # busiest processes (benchmarks/idle_stack.py), for half a second off a visibility window of seconds
    "broker_restore_interval": Budget(
        10, floor=0.5, reason="how often workers look for tasks whose worker died"),
    "broker_restore_lock": Budget(
        60, floor=0.5, reason="a worker killed during its restore sweep (which takes milliseconds) "
                              "holds the sweep's lock this long; kombu's default is 300 s"),
    "sqs_visibility": Budget(
        60, floor=1.0, reason="the heartbeat renews this window every third of it; SQS counts whole seconds"),
    "sqs_attempt_cap": Budget(
        900, reason="the same as the batch hard limit: after that an SQS attempt is released for retry"),
    # the floor: the backoff must stay well above the consumer's own latency from a release to the next
    # claim (a receive, a claim: up to a second on a loaded machine), or a backoff looks like none
    "sqs_retry_backoff": Budget(
        30, floor=2.0, reason="a failed attempt waits this long before the queue offers it again"),
    "relay_poll": Budget(
        5, floor=0.5, reason="a row written while the relay's listener was down waits at most this long; "
                             "a written row wakes the relay at once (outbox_wakeups)"),
    "relay_retry": Budget(
        1, floor=0.05, reason="after a failed pass (broker or database down) the relay tries again this soon, "
                              "doubling up to 30 s"),
    # -- status streams -------------------------------------------------------------
    "stream_recheck": Budget(
        10, floor=0.5, reason="an open status stream compares what it sent with the database this often: an "
                              "event lost on the way (Redis away, a publisher killed after its commit) is "
                              "late by at most this much, never missing"),
    "stream_overlap": Budget(
        30, floor=2.0, reason="a change is dated when its transaction began; catching up looks back this much "
                              "further, so a change that committed late is not skipped"),
}


# The wrong values of the limit-layering mutants: each looks reasonable on its own row.
_MUTATED: dict[str, tuple[str, Budget]] = {
    "model_call": ("model-deadline-over-batch-budget", Budget(
        660, reason="the slowest call on record took ~11 min: let every call run that long")),
    "broker_visibility": ("broker-visibility-below-hard-limit", Budget(
        300, floor=2.0, reason="a dead worker's task should come back within 5 minutes")),
}


def budget(name: str) -> Budget:
    """The table's row ``name`` (as a mutant may have changed it)."""
    changed = _MUTATED.get(name)
    if changed is not None and mutant(changed[0]):
        return changed[1]
    return BUDGETS[name]


def time_scale() -> float:
    """The time scale of this process (``REFAPP_TIME_SCALE``, default 1)."""
    return settings.get().time_scale


def scaled(name: str, scale: float | None = None) -> float:
    """Budget ``name`` (its soft value for a task) in seconds at the time scale."""
    row = budget(name)
    factor = time_scale() if scale is None else scale
    return max(row.seconds * factor, row.floor)


def scaled_hard(name: str, scale: float | None = None) -> float:
    """The hard limit of task budget ``name`` at the time scale."""
    row = budget(name)
    if row.hard is None:
        raise KeyError(f"budget {name!r} has no hard limit")
    factor = time_scale() if scale is None else scale
    return max(row.hard * factor, row.floor)


def task_budget_name(task: str) -> str:
    """The row that governs Celery task ``task``: its own, else ``task:default``."""
    own = f"task:{task}"
    return own if own in BUDGETS else "task:default"


def task_limits(task: str) -> dict[str, float]:
    """Decorator keywords (``soft_time_limit``, ``time_limit``) for Celery task ``task``."""
    row = task_budget_name(task)
    if row == "task:default" and mutant("cli-budget-wins"):
        return {}  # the wrong shape: "no limit" here, so the worker's blanket flag decides
    return {"soft_time_limit": scaled(row), "time_limit": scaled_hard(row)}


TASKS = ("refapp.process_job", "refapp.sweep_overdue")  # every task refapp registers


def declared_budgets(time_scale: float | None = None) -> dict[str, dict[str, float]]:
    """Per task, the soft and hard limit refapp declares, in scaled seconds.

    ``time_scale`` defaults to ``REFAPP_TIME_SCALE`` (1 when unset): a caller
    outside refapp's processes should pass the scale the workers run at.
    """
    if time_scale is None:
        time_scale = float(os.environ.get("REFAPP_TIME_SCALE") or 1.0)
    return {
        task: {"soft": scaled(task_budget_name(task), time_scale),
               "hard": scaled_hard(task_budget_name(task), time_scale)}
        for task in TASKS
    }


def nightly_recovery(time_scale: float | None = None) -> float:
    """Seconds refapp's own defences take to bring back a job a fault lost, at ``time_scale``.

    For a nightly run's job bound (``[tool.jobquake.nightly] recovery``): the
    slowest of its three ways back. A message the broker lost (Redis back
    empty) is re-sent by the sweeper once the job was queued too long; a
    dead attempt, once its heartbeat is stale; a task a dead worker held,
    by the broker once its visibility window has passed. Each waits for the
    next sweeper pass or restore sweep.
    """
    if time_scale is None:
        time_scale = float(os.environ.get("REFAPP_TIME_SCALE") or 1.0)
    sweeper = scaled("sweeper_interval", time_scale)
    return round(max(scaled("queued_too_long", time_scale) + sweeper,
                     scaled("heartbeat_stale", time_scale) + sweeper,
                     scaled("broker_visibility", time_scale) + scaled("broker_restore_interval", time_scale)), 2)
