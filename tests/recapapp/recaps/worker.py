"""The Celery application: ``celery -A recaps.worker worker`` and ``celery -A recaps.worker beat``.

Tasks are acknowledged once they ran (a worker that dies mid-task leaves
its task with the broker, which hands it out again) and are written to run
twice safely. Beat runs the sweep every minute.
"""
from __future__ import annotations

from celery import Celery

from recaps.bugs import bug
from recaps.config import get_settings

celery_app = Celery("recaps", broker=get_settings().redis_url, include=["recaps.tasks"])
celery_app.conf.update(
    task_acks_late=not bug("acks-early"),
    task_reject_on_worker_lost=True,
    task_ignore_result=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    beat_schedule={
        "sweep-stale-recaps": {"task": "recaps.sweep", "schedule": 60.0},
    },
)
