"""Invariant: one upload's work is billed once, however many times it was submitted.

``no_double_billing`` groups calls by idempotency key and by job. An app
that makes a fresh job for every request (a user's second click, a gateway
retrying a request that timed out) runs the same upload as two jobs, with
two sets of keys: each job is billed once, and the customer twice. This
checker groups billed calls by *upload* and step instead.

An upload is what the user sent, as the ``submit`` events name it: the
``invoke submit`` carries ``{project, file}``, the ``ok submit`` that
answers it carries the job id. Each answer is paired with the latest
unanswered request before it, which is exact when a client submits one
request at a time (as ``DuplicateSubmission`` does). Jobs not reached
through a recorded submission are not judged.

Two billed calls for the same upload and step, made by two different jobs,
are a violation. (Two billed calls of one job are ``no_double_billing``'s
to judge, so each bug is reported by the checker meant for it.) The
counterexample is the earliest pair: both calls, with their jobs,
attempts and keys.
"""
from __future__ import annotations

from typing import Any, Iterator

from harness.checks.needs import PAID_CALLS, SUBMISSIONS
from harness.checks.paid_calls import PaidCall, paid_calls
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.checks.submissions import accepted
from harness.history import vocabulary as v
from harness.history.event import INVOKE, Event
from harness.history.history import History
from harness.history.snapshot import Snapshot

NAME = "no_upload_billed_twice"

Upload = tuple[str, str]  # (project, file)


def answered_submissions(history: History) -> Iterator[tuple[Event, Event | None]]:
    """(answer, the request it answers or None) for every ``submit`` answer, in order.

    Each answer is paired with the latest unanswered request before it: exact
    when a client submits one request at a time."""
    pending: list[Event] = []
    for event in history.by_source(v.SUBMIT, name=v.SUBMIT):
        if event.type == INVOKE:
            pending.append(event)
        else:
            yield event, (pending.pop() if pending else None)


def uploads_by_job(history: History) -> dict[str, Upload]:
    """The upload each accepted submission's job was made for."""
    found: dict[str, Upload] = {}
    for event, request in answered_submissions(history):
        job_id = event.job_id or event.data.get("job_id")
        if request is None or job_id is None or not accepted(event):
            continue
        found.setdefault(str(job_id), (str(request.data.get("project")), str(request.data.get("file"))))
    return found


def _duplicates(calls: tuple[PaidCall, ...], uploads: dict[str, Upload]) -> list[tuple[Upload, PaidCall, PaidCall]]:
    first_billed: dict[tuple[Upload, str | None], PaidCall] = {}
    pairs = []
    for call in calls:
        if not call.billed or call.job_id not in uploads:
            continue
        key = (uploads[call.job_id], call.step)
        first = first_billed.setdefault(key, call)
        if first.job_id != call.job_id:
            pairs.append((uploads[call.job_id], first, call))
    return pairs


def _describe(violation: dict[str, Any]) -> str:
    a, b = violation["calls"]
    project, file = violation["upload"]
    return (f"upload {project}/{file} step {a['step']!r} billed twice, by jobs {a['job_id']} and {b['job_id']}: "
            f"{a['call_id']} at {a['at']:.3f}s and {b['call_id']} at {b['at']:.3f}s")


@invariant(NAME, needs=(PAID_CALLS, SUBMISSIONS))
def no_upload_billed_twice(history: History, snapshot: Snapshot | None) -> Result:
    """No two jobs billed for the same upload (project, file) and step."""
    uploads = uploads_by_job(history)
    calls = paid_calls(history)
    violations = [{"upload": list(upload), "job_ids": sorted({a.job_id, b.job_id}), "step": a.step,
                   "calls": [a.evidence(history.start), b.evidence(history.start)]}
                  for upload, a, b in _duplicates(calls, uploads)]
    if violations:
        first = violations[0]
        return invalid_result(NAME, f"{len(violations)} duplicate billing(s) of one upload; first: "
                              f"{_describe(first)}", violations, counterexample=first["calls"])
    jobs_per_upload: dict[Upload, set[str]] = {}
    for job_id, upload in uploads.items():
        jobs_per_upload.setdefault(upload, set()).add(job_id)
    if not uploads:
        return unknown_result(NAME, "no submission named its upload (project, file) and its job: "
                              "no upload to follow")
    billed = sum(c.billed and c.job_id in uploads for c in calls)
    return valid_result(NAME, f"{len(jobs_per_upload)} upload(s) as {len(uploads)} job(s), "
                        f"{billed} billed call(s), none billed twice", uploads=len(jobs_per_upload),
                        jobs=len(uploads), billed_calls=billed)
