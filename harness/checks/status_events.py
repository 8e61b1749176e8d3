"""Invariant: what users were told matches what the database ended with.

Every terminal status event the app sent to users (``event status`` whose
``state`` is terminal) must equal the job's final state in the snapshot:
telling a user "done" for a job the database says "failed" (or telling
them twice, differently) is a lie a person acts on. With
``require_final_event=True``, every job that ended terminal must also have
had its final state announced. Without a snapshot the verdict is unknown.
"""
from __future__ import annotations

from typing import Any

from harness.checks.needs import JOBS
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.history import History
from harness.history.snapshot import Snapshot

NAME = "status_events_consistent"


def _announced(history: History, snapshot: Snapshot) -> dict[str, list[tuple[float, str]]]:
    """Terminal states announced per job, in order, with their times."""
    told: dict[str, list[tuple[float, str]]] = {}
    for event in history.by_source(v.EVENT, name=v.STATUS):
        state = event.data.get("state")
        if event.job_id is not None and snapshot.is_terminal(state):
            told.setdefault(event.job_id, []).append((event.t, str(state)))
    return told


@invariant(NAME, needs=(JOBS,))
def status_events_consistent(history: History, snapshot: Snapshot | None,
                             require_final_event: bool = False) -> Result:
    """Each terminal status sent to users equals the job's final DB state."""
    if snapshot is None:
        return unknown_result(NAME, "no final DB snapshot was taken: nothing to compare events with")
    told = _announced(history, snapshot)
    violations: list[dict[str, Any]] = []
    for job_id, announcements in told.items():
        row = snapshot.job(job_id)
        final = None if row is None else row.state
        for t, state in announcements:
            if state != final:
                violations.append({"job_id": job_id, "at": history.relative(t), "told": state,
                                   "db_state": final, "why": f"users were told {state!r}, "
                                   f"the database ended with {final!r}"})
    if require_final_event:
        for row in snapshot.jobs:
            if snapshot.is_terminal(row.state) and row.state not in {s for _, s in told.get(row.job_id, [])}:
                violations.append({"job_id": row.job_id, "at": None, "told": None,
                                   "db_state": row.state, "why": f"the job ended {row.state!r} "
                                   "and users were never told"})
    if violations:
        violations.sort(key=lambda item: (item["at"] is None, item["at"] or 0.0))
        first = violations[0]
        return invalid_result(NAME, f"{len(violations)} status event(s) disagree with the "
                              f"database; first: job {first['job_id']}: {first['why']}", violations)
    count = sum(len(a) for a in told.values())
    if not count and not require_final_event:
        return unknown_result(NAME, "no terminal status event was recorded: users were told nothing "
                              "to compare with the database", terminal_events=0)
    return valid_result(NAME, f"{count} terminal status event(s), all match the database",
                        terminal_events=count)
