"""Evidence for the idempotency scenarios: when each of refapp's paid steps was saved.

refapp commits the answer of each paid step as one ``step_results`` row
(``job_id``, ``step``, ``attempt``, ``call_id``, ``created_at``). The
checker ``no_paid_call_for_done_step`` needs those commits in the history,
as ``write ok step_saved`` events at the time they happened.
"""
from __future__ import annotations

from typing import Any

from harness import Run
from harness.checks.done_steps import STEP_SAVED
from harness.history import vocabulary as v
from harness.history.timing import committed_data

SAVED_STEPS_SQL = """
    SELECT job_id, step, attempt, call_id, extract(epoch FROM created_at)::float8,
           extract(epoch FROM pg_xact_commit_timestamp(xmin))::float8
      FROM step_results ORDER BY created_at
"""


def record_saved_steps(jq: Run, refapp: Any) -> int:
    """Record every ``step_results`` row as a ``write ok step_saved`` event; returns how many.

    ``created_at`` is the saving transaction's ``now()`` (its start); the
    row's commit time (``pg_xact_commit_timestamp``) is when the step became
    done for everyone else, which is what the checker reads. Both are
    wall-clock readings of this machine's database, which the history places
    on its monotonic clock with the offset in force when they were made.
    """
    rows = refapp.query(SAVED_STEPS_SQL)
    for job_id, step, attempt, call_id, wall, committed in rows:
        jq.history.record(v.WRITE, "ok", STEP_SAVED, job_id=job_id, attempt=attempt,
                          data={"step": step, "table": "step_results", "call_id": call_id,
                                "attempt": attempt, "refused": False,
                                **committed_data(committed)},
                          wall=wall)
    return len(rows)
