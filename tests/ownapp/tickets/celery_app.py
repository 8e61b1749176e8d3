"""The Celery application (``celery -A tickets.celery_app worker``).

- ``task_acks_late`` + ``task_reject_on_worker_lost``: a task is acknowledged
  after it ran, so a worker killed mid-task leaves it in Redis, which hands
  it out again after ``visibility_timeout``. The task is built to run twice.
- The Redis transport looks for unacknowledged tasks every
  ``unacked_restore_interval`` seconds; the default (100 s x throttle) is far
  longer than the visibility window, so both are set.
- Time limits are on the task itself (tasks.py), not here.
"""
from __future__ import annotations

from celery import Celery

from tickets import settings
from tickets.bugs import bug

app = Celery("tickets", broker=settings.broker_url(), include=["tickets.tasks"])
app.conf.update(
    task_acks_late=not bug("acks-early"),
    task_reject_on_worker_lost=True,
    task_ignore_result=True,
    task_default_queue="tickets",
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    broker_transport_options={
        "visibility_timeout": settings.broker_visibility_s(),
        "unacked_restore_interval": 1.0,
        "unacked_restore_throttle": 1,
        "unacked_mutex_expire": 5,
    },
)
