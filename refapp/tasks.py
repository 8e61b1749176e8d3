"""The Celery tasks. Each declares its time budget in its decorator, from ``budgets.BUDGETS``."""
from __future__ import annotations

from celery import shared_task

from refapp import budgets, jobrun, sweep
from refapp.celery_app import TASK_PROCESS_JOB, TASK_SWEEP_OVERDUE


@shared_task(name=TASK_PROCESS_JOB, **budgets.task_limits(TASK_PROCESS_JOB))
def process_job(job_id: str, dispatch: int = 1) -> str:
    """Run one attempt at a document batch or CSV import (``dispatch``: which sending this is)."""
    return jobrun.run_on_celery(job_id)


@shared_task(name=TASK_SWEEP_OVERDUE, **budgets.task_limits(TASK_SWEEP_OVERDUE))
def sweep_overdue() -> dict[str, object]:
    """Mark every open, past-due invoice overdue."""
    return sweep.run_overdue_sweep()
