"""Send one job message to where its job runs: the Celery queue or the SQS queue."""
from __future__ import annotations

from typing import Any

from refapp import sqs_queues
from refapp.celery_app import QUEUE, TASK_PROCESS_JOB, get_app

DESTINATIONS = ("celery", "sqs")


def send(destination: str, payload: dict[str, Any]) -> None:
    """Send ``payload`` (``{"job_id", "dispatch"}``); raises if the broker does not take it."""
    if destination == "celery":
        get_app().send_task(TASK_PROCESS_JOB, kwargs=payload, queue=QUEUE)
    elif destination == "sqs":
        sqs_queues.send(payload)
    else:
        raise ValueError(f"unknown destination {destination!r}; known: {', '.join(DESTINATIONS)}")
