"""Small helpers of the hang scenarios: the stack's deadline and slots, and a sharper clock.

``record_item_outcomes`` turns refapp's saved per-document outcomes into
``write`` history events at the time they were written. Once a model call
gives up, the failed document's row is the first thing refapp writes (the
job's final state comes two transactions later), so it is the closest
record of when the app stopped waiting; ``deadline_honoured`` reads it.
"""
from __future__ import annotations

from typing import Any

from harness import Run
from harness.history import vocabulary as v


def configured_deadline(jq: Run) -> float:
    """The per-call deadline refapp reads from its environment, in this run's seconds."""
    return jq.scaled(float(jq.config.env["REFAPP_MODEL_DEADLINE_S"]))


def worker_slots(jq: Run) -> int:
    """How many jobs can run at once: Celery workers × prefork children per worker."""
    return jq.config.workers * int(jq.config.env["REFAPP_WORKER_CONCURRENCY"])


def submit_one_document_jobs(refapp: Any, count: int, name: str) -> list[str]:
    """``count`` uploads of one document each: one paid call per job."""
    return [refapp.submit([f"invoice {i} from ACME"], file=f"{name}-{i}.pdf") for i in range(count)]


def record_item_outcomes(jq: Run, refapp: Any) -> int:
    """Record every saved document outcome as ``write ok write`` (table ``items``); how many.

    ``updated_at`` is the writing transaction's start, converted from the
    database's wall clock to the history's monotonic one.
    """
    rows = refapp.query("SELECT job_id, idx, attempt, state, extract(epoch FROM updated_at)::float8 "
                        "FROM items WHERE state <> 'pending' ORDER BY updated_at")
    for job_id, idx, attempt, state, wall in rows:
        jq.history.record(v.WRITE, "ok", v.WRITE, job_id=job_id, attempt=attempt, wall=wall,
                          data={"attempt": attempt, "table": "items", "item": idx, "state": state,
                                "refused": False})
    return len(rows)
