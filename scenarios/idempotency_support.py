"""Evidence for the idempotency scenarios: when each of refapp's paid steps was saved.

refapp commits the answer of each paid step as one ``step_results`` row
(``job_id``, ``step``, ``attempt``, ``call_id``, ``created_at``). The
checker ``no_paid_call_for_done_step`` needs those commits in the history,
as ``write ok step_saved`` events at the time they happened.
"""
from __future__ import annotations

import time
from typing import Any

from harness.checks.done_steps import STEP_SAVED
from harness.history import vocabulary as v

SAVED_STEPS_SQL = """
    SELECT job_id, step, attempt, call_id, extract(epoch FROM created_at)::float8
      FROM step_results ORDER BY created_at
"""


def record_saved_steps(jq: Any, refapp: Any) -> int:
    """Record every ``step_results`` row as a ``write ok step_saved`` event; returns how many.

    ``created_at`` is the saving transaction's ``now()`` (its start, so at
    most the commit time), a wall-clock reading of this machine's database:
    the event's monotonic time is derived with the offset between the two
    clocks here and now.
    """
    rows = refapp.query(SAVED_STEPS_SQL)
    to_monotonic = time.monotonic() - time.time()
    for job_id, step, attempt, call_id, wall in rows:
        jq.history.record(v.WRITE, "ok", STEP_SAVED, job_id=job_id, attempt=attempt,
                          data={"step": step, "table": "step_results", "call_id": call_id,
                                "attempt": attempt, "refused": False},
                          t=wall + to_monotonic, wall=wall)
    return len(rows)
