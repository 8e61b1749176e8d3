"""The nightly's own invariant: no job stuck past its bound while the run went on.

It reads what the monitor recorded (``nightly fail stuck`` per stuck job,
``nightly ok tick`` per look at the job table): no tick means nobody
looked, and the verdict is unknown, never valid.
"""
from __future__ import annotations

from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history.history import History
from harness.history.snapshot import Snapshot
from harness.nightly.nemesis import SOURCE

NAME = "no_job_stuck"


@invariant(NAME)
def no_job_stuck(history: History, snapshot: Snapshot | None) -> Result:
    """Every accepted job reached a terminal state within the job bound (after the last delaying fault)."""
    ticks = history.by_source(SOURCE, "tick")
    if not ticks:
        return unknown_result(NAME, "the job table was never read during the run: no evidence of progress")
    stuck = history.by_source(SOURCE, "stuck")
    if not stuck:
        return valid_result(NAME, f"no job stuck past its bound over {len(ticks)} looks at the job table",
                            ticks=len(ticks))
    violations = [{"job_id": e.job_id, "t": history.relative(e.t), **e.data} for e in stuck]
    first = violations[0]
    return invalid_result(NAME, f"{len(violations)} job(s) stuck past the {first['bound']:g} s bound; first: "
                                f"{first['job_id']} in {first['state']!r}, found at {first['found_at']:g} s",
                          violations)
