"""The Celery tasks. Each declares its time budget in its decorator, from ``budgets.BUDGETS``.

``process_job`` also declares its retries: a database that is briefly gone
when the task claims its job (a restart, every connection slot taken) is
worth another go after ``claim_retry_delay``; nothing else that escapes the
task is. Above all not the soft time limit: the batch already finalised the
job as timed out, and running it again would spend another whole budget.
"""
from __future__ import annotations

from celery import shared_task
from sqlalchemy.exc import OperationalError

from refapp import budgets, jobrun, sweep
from refapp.celery_app import TASK_PROCESS_JOB, TASK_SWEEP_OVERDUE
from refapp.mutants import mutant

CLAIM_RETRIES = 3  # a database restart takes seconds: three pauses outlast it
RETRY_ON = (OperationalError,)  # the database was not there; the claim changed nothing


@shared_task(bind=True, name=TASK_PROCESS_JOB, max_retries=CLAIM_RETRIES,
             default_retry_delay=budgets.scaled("claim_retry_delay"), **budgets.task_limits(TASK_PROCESS_JOB))
def process_job(self, job_id: str, dispatch: int = 1) -> str:
    """Run one attempt at a document batch or CSV import (``dispatch``: which sending this is)."""
    try:
        return jobrun.run_on_celery(job_id)
    except Exception as exc:
        # the wrong shape (retry-any-exception): retry whatever escapes, the soft time limit included
        if isinstance(exc, RETRY_ON) or mutant("retry-any-exception"):
            raise self.retry(exc=exc) from exc
        raise


@shared_task(name=TASK_SWEEP_OVERDUE, **budgets.task_limits(TASK_SWEEP_OVERDUE))
def sweep_overdue() -> dict[str, object]:
    """Mark every open, past-due invoice overdue."""
    return sweep.run_overdue_sweep()
