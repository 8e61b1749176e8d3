"""Invariant: a refused submission leaves nothing behind.

A user answered "not accepted" (a 4xx / 5xx, a timeout the API reports as
a failure) tries again, or gives up; either way the job must not exist, run
and bill behind their back, or the user who tries again pays twice. The
answer a user got must agree with what the database (and the ledger) show.

Evidence: the submission record (``submit`` events: each request's
upload, each answer) and the job state log's inserts (``job ok state`` with
``op = INSERT``: when each job row was written). A job is *claimed* by an
accepted submission that names it and was sent no later than the row was
written (the request that wrote it). A job written during the test that no
such submission claims, while submissions were refused, was left behind by
a refused one: invalid, with the refused answer nearest in time, the job's
final state and what it was billed. Jobs written while an answer was lost
(``info``: the client never heard) are not judged: that request may have
made them.

``unknown`` without a refused submission (nothing to judge) or without the
state log's inserts.
"""
from __future__ import annotations

from typing import Any

from harness.checks.needs import Missing, Need, read_count
from harness.checks.paid_calls import calls_by_job
from harness.checks.result import Result, invalid_result, valid_result
from harness.checks.runner import invariant
from harness.checks.submissions import accepted
from harness.history.snapshot import Snapshot
from harness.history import vocabulary as v
from harness.history.event import FAIL, INFO, INVOKE, Event
from harness.history.history import History

NAME = "refused_submission_leaves_nothing"
INSERT = "INSERT"


def _refused(history: History) -> list[Event]:
    return [e for e in history.by_source(v.SUBMIT, name=v.SUBMIT) if e.type == FAIL]


def _inserts(history: History) -> dict[str, Event]:
    """The first insert of each job row written during the test."""
    found: dict[str, Event] = {}
    for event in history.by_source(v.JOB, name=v.STATE):
        if event.job_id is not None and event.data.get("op") == INSERT:
            found.setdefault(event.job_id, event)
    return found


def _refusals_and_inserts(history: History, snapshot: Snapshot | None) -> Missing | None:
    if not _refused(history):
        return Missing("no submission was refused: nothing to hold to its answer")
    if read_count(history, v.STATE_LOG_SOURCE) is None and not history.by_source(v.JOB, name=v.STATE):
        return Missing("the job state log (when each job row was written) was not read")
    return None


REFUSALS = Need("refused_submissions", "a refused submission, and the job state log's inserts", _refusals_and_inserts)


def _upload(event: Event) -> tuple[Any, Any]:
    return event.data.get("project"), event.data.get("file")


def _sent_at(history: History, answer: Event) -> float:
    """When the request ``answer`` answers was sent: the last request for the same upload before it."""
    sends = [e.t for e in history.by_source(v.SUBMIT, name=v.SUBMIT)
             if e.type == INVOKE and e.t <= answer.t and _upload(e) == _upload(answer)]
    return max(sends) if sends and _upload(answer) != (None, None) else answer.t


def _claims(history: History) -> dict[str, float]:
    """Per job, when the earliest accepted submission naming it was sent."""
    claimed: dict[str, float] = {}
    for answer in history.by_source(v.SUBMIT, name=v.SUBMIT):
        job_id = answer.job_id or answer.data.get("job_id")
        if accepted(answer) and job_id is not None:
            sent = _sent_at(history, answer)
            claimed[str(job_id)] = min(claimed.get(str(job_id), sent), sent)
    return claimed


def _left_behind(history: History, snapshot: Snapshot | None, job_id: str, written: Event,
                 refusal: Event) -> dict[str, Any]:
    row = snapshot.job(job_id) if snapshot is not None else None
    billed = [c for c in calls_by_job(history).get(job_id, []) if c.billed]
    return {"job_id": job_id, "written_at": history.relative(written.t),
            "sent_at": history.relative(_sent_at(history, refusal)), "refused_at": history.relative(refusal.t),
            "answer": refusal.data.get("status") or refusal.data.get("error"),
            "final_state": row.state if row is not None else None, "billed_calls": len(billed)}


def _blamed(history: History, written: Event, refused: list[Event], lost: list[Event]) -> Event | None:
    """The refused request a row written at ``written`` belongs to: the last one sent before the write;
    None when none was, or when a request whose answer was lost was sent after it (it may be that one's)."""
    sent = [(_sent_at(history, e), e) for e in refused]
    before = [(t, e) for t, e in sent if t <= written.t]
    if not before:
        return None
    t, refusal = max(before, key=lambda pair: pair[0])
    if any(t <= _sent_at(history, e) <= written.t for e in lost):
        return None
    return refusal


@invariant(NAME, needs=(REFUSALS,))
def refused_submission_leaves_nothing(history: History, snapshot: Snapshot | None) -> Result:
    """No job row is written for a submission the user was told was not accepted."""
    refused = _refused(history)
    lost = [e for e in history.by_source(v.SUBMIT, name=v.SUBMIT) if e.type == INFO]
    claims = _claims(history)
    written = _inserts(history)
    violations = []
    for job_id, insert in written.items():
        refusal = None if claims.get(job_id, float("inf")) <= insert.t else _blamed(history, insert, refused, lost)
        if refusal is not None:
            violations.append(_left_behind(history, snapshot, job_id, insert, refusal))
    if violations:
        violations.sort(key=lambda x: x["written_at"])
        f = violations[0]
        return invalid_result(NAME, f"{len(violations)} job(s) saved for refused submissions; first: job "
                              f"{f['job_id']} written at {f['written_at']:.3f}s although the user was answered "
                              f"{f['answer']!r} at {f['refused_at']:.3f}s; it ended {f['final_state']!r}, "
                              f"billed {f['billed_calls']} call(s)", violations, refused=len(refused))
    return valid_result(NAME, f"{len(refused)} refused submission(s) left no job behind",
                        refused=len(refused), jobs_written=len(written))
