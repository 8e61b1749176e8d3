"""Invariant: every job reached a terminal state a person can see.

Reads the final snapshot: a row whose state is not terminal (default
``done`` / ``failed`` / ``needs_human``, or ``terminal_states=``) is stuck.
Each stuck job is reported with its last state, how long it had been in it
(``age_s``: snapshot time minus ``updated_at``), how long since its last
heartbeat, and how many attempts the history saw. The counterexample is the
oldest stuck job. Without a snapshot the verdict is unknown.
"""
from __future__ import annotations

from typing import Any, Sequence

from harness.checks.needs import JOBS
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history.history import History
from harness.history.snapshot import JobRow, Snapshot

NAME = "every_job_terminal"


def _age(now: float, then: float | None) -> float | None:
    return None if then is None else round(now - then, 3)


def _attempts(history: History, row: JobRow) -> int:
    seen = {e.attempt for e in history.by_job(row.job_id) if e.attempt is not None}
    if row.attempt is not None:
        seen.add(row.attempt)
    return len(seen)


def stuck_job(history: History, snapshot: Snapshot, row: JobRow) -> dict[str, Any]:
    """The evidence for one job that is not terminal."""
    events = history.by_job(row.job_id)
    return {"job_id": row.job_id, "state": row.state, "reason": row.reason, "attempt": row.attempt,
            "age_s": _age(snapshot.taken_at_wall, row.updated_at),
            "heartbeat_age_s": _age(snapshot.taken_at_wall, row.heartbeat_at),
            "attempts": _attempts(history, row),
            "last_event_at": history.relative(events[-1].t) if events else None}


def _describe(stuck: dict[str, Any]) -> str:
    age = "" if stuck["age_s"] is None else f" for {stuck['age_s']:.1f}s"
    beat = ("no heartbeat" if stuck["heartbeat_age_s"] is None
            else f"last heartbeat {stuck['heartbeat_age_s']:.1f}s ago")
    return (f"job {stuck['job_id']} stuck in {stuck['state']!r}{age} "
            f"({beat}, {stuck['attempts']} attempt(s))")


@invariant(NAME, needs=(JOBS,))
def every_job_terminal(history: History, snapshot: Snapshot | None,
                       terminal_states: Sequence[str] | None = None) -> Result:
    """Every row of the final snapshot is in a terminal state."""
    if snapshot is None:
        return unknown_result(NAME, "no final DB snapshot was taken: cannot tell whether jobs ended")
    terminal = tuple(terminal_states or snapshot.terminal_states)
    stuck_rows = [row for row in snapshot.jobs if row.state not in terminal]
    if not stuck_rows:
        return valid_result(NAME, f"all {len(snapshot.jobs)} jobs reached a terminal state",
                            jobs=len(snapshot.jobs))
    stuck_rows.sort(key=lambda r: (r.created_at is None, r.created_at or 0.0, r.job_id))
    stuck = [stuck_job(history, snapshot, row) for row in stuck_rows]
    message = (f"{len(stuck)} of {len(snapshot.jobs)} jobs never reached a terminal state "
               f"({', '.join(terminal)}); first: {_describe(stuck[0])}")
    return invalid_result(NAME, message, stuck, terminal_states=list(terminal))
