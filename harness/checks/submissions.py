"""Invariant: no accepted submission was lost.

Every ``ok submit`` whose status is 2xx (or absent) promised the user a job.
That job must have a row in the final snapshot, in a terminal state. A 2xx
answer that carried no job id cannot be followed: it makes the verdict
``unknown`` unless something is plainly lost. Submissions whose answer was
lost (``info``) or refused (``fail``) promised nothing and are not judged.
"""
from __future__ import annotations

from typing import Any

from harness.checks.needs import SUBMISSIONS
from harness.checks.result import UNKNOWN, Result, invalid_result, valid_result, unknown_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import OK, Event
from harness.history.history import History
from harness.history.snapshot import Snapshot

NAME = "no_lost_submission"


def accepted(event: Event) -> bool:
    """An ``ok submit`` with a 2xx status (or no status at all)."""
    status = event.data.get("status")
    return event.type == OK and (status is None or 200 <= int(status) < 300)


def _job_id(event: Event) -> str | None:
    job_id = event.job_id if event.job_id is not None else event.data.get("job_id")
    return None if job_id is None else str(job_id)


def _problem(job_id: str, snapshot: Snapshot) -> str | None:
    row = snapshot.job(job_id)
    if row is None:
        return "no job row"
    if not snapshot.is_terminal(row.state):
        return f"row stuck in {row.state!r}"
    return None


@invariant(NAME, needs=(SUBMISSIONS,))
def no_lost_submission(history: History, snapshot: Snapshot | None) -> Result:
    """Each 2xx submission has a job row that reached a terminal state."""
    if snapshot is None:
        return unknown_result(NAME, "no final DB snapshot was taken: cannot follow submissions")
    submits = [e for e in history.by_source(v.SUBMIT, name=v.SUBMIT) if accepted(e)]
    lost: list[dict[str, Any]] = []
    untracked: list[dict[str, Any]] = []
    for event in submits:
        job_id = _job_id(event)
        at = history.relative(event.t)
        if job_id is None:
            untracked.append({"at": at, "status": event.data.get("status")})
            continue
        problem = _problem(job_id, snapshot)
        if problem:
            lost.append({"job_id": job_id, "at": at, "status": event.data.get("status"),
                         "problem": problem})
    if lost:
        first = lost[0]
        return invalid_result(NAME, f"{len(lost)} of {len(submits)} accepted submissions lost; "
                              f"first: job {first['job_id']} accepted at {first['at']:.3f}s "
                              f"(HTTP {first['status']}) has {first['problem']}", lost,
                              untracked=untracked)
    if untracked:
        return Result(NAME, UNKNOWN, f"{len(untracked)} accepted submission(s) answered without a "
                      f"job id: cannot tell whether they were kept", counterexample=untracked[:1],
                      details={"untracked": untracked})
    return valid_result(NAME, f"all {len(submits)} accepted submissions have a terminal job",
                        accepted=len(submits))
