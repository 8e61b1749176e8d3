"""The Celery application: late acks, lost-worker requeue, declared budgets, tuned unacked restore.

Built on first use (``get_app()``, or ``refapp.celery_app.app`` for
``celery -A refapp.celery_app``), so importing this module reads nothing.

Why these settings:

- ``task_acks_late`` + ``task_reject_on_worker_lost``: a worker that dies
  mid-task must not take the task with it. The price is that a task can run
  twice, which every step is built to tolerate.
- The Redis transport hides an unacked task for ``visibility_timeout`` and
  only looks for such tasks every ``unacked_restore_interval`` x
  ``unacked_restore_throttle`` seconds (100 s by default). The visibility
  window is longer than the longest hard limit, so a healthy task is never
  handed out twice; the restore sweep runs every interval (throttle 1), so a
  dead worker's task comes back soon after the window. The sweep's lock
  expires quickly too: a worker killed while holding it would otherwise
  stop every restore for ``unacked_mutex_expire`` (300 s by default).
- No time limit here, and none on the worker command line: every task
  declares its own in its decorator, from ``budgets.BUDGETS``.
- prefetch 1: a worker holds no tasks it is not about to run.
"""
from __future__ import annotations

from typing import Any

from celery import Celery

from refapp import budgets, settings
from refapp.mutants import mutant

QUEUE = "refapp"
TASK_PROCESS_JOB = "refapp.process_job"
TASK_SWEEP_OVERDUE = "refapp.sweep_overdue"
SWEEP_EVERY = 3600.0  # real seconds between scheduled overdue sweeps


def create_app(config: settings.Settings) -> Celery:
    """A Celery app for ``config``."""
    app = Celery("refapp", broker=config.broker_url, include=["refapp.tasks"])
    app.conf.update(
        task_acks_late=not mutant("acks-early"),
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        task_ignore_result=True,
        task_default_queue=QUEUE,
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            "visibility_timeout": budgets.scaled("broker_visibility"),
            "unacked_restore_interval": budgets.scaled("broker_restore_interval"),
            "unacked_restore_throttle": 1,
            "unacked_mutex_expire": budgets.scaled("broker_restore_lock"),
        },
        beat_schedule={"sweep-overdue": {"task": TASK_SWEEP_OVERDUE,
                                         "schedule": SWEEP_EVERY * config.time_scale}},
    )
    return app


_app: Celery | None = None


def get_app() -> Celery:
    """This process's Celery app."""
    global _app
    if _app is None:
        _app = create_app(settings.get())
    return _app


def __getattr__(name: str) -> Any:
    if name in ("app", "celery"):  # what `celery -A refapp.celery_app` looks up
        return get_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
