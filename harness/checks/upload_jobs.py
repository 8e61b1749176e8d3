"""Invariant: two different uploads are never answered with one job.

An app that derives a job id from part of what identifies an upload (the
file name without its project, a content hash of one field) answers a
second, different upload with the first upload's job. Both submissions are
accepted, the job ends ``done``, nothing is billed twice: every other
invariant is green, and the second user's work never runs. What shows it is
the submissions themselves.

An upload is what the user sent, as the ``submit`` events name it:
``{project, file}`` on the ``ok submit`` itself, or on the ``invoke
submit`` it answers (each answer paired with the latest unanswered request
before it, exact when a client submits one request at a time, as
``no_upload_billed_twice`` pairs them). Submitting the same upload again
and getting the same job back is right, and not judged here.

Accepted submissions of two different uploads answered with the same job id
are a violation. Fewer than two different uploads accepted leaves nothing to
tell apart: ``unknown``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.checks.needs import Missing, Need
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.checks.submissions import accepted
from harness.checks.uploads import Upload, answered_submissions
from harness.history.event import Event
from harness.history.history import History
from harness.history.snapshot import Snapshot

NAME = "each_upload_its_own_job"


@dataclass(frozen=True)
class Accepted:
    """One accepted submission: the upload it named and the job it was answered with."""

    upload: Upload
    job_id: str
    event: Event


def _upload(event: Event | None) -> Upload | None:
    if event is None:
        return None
    project, file = event.data.get("project"), event.data.get("file")
    return None if project is None or file is None else (str(project), str(file))


def accepted_uploads(history: History) -> list[Accepted]:
    """Every accepted submission that names its upload and its job, in the order answered."""
    found: list[Accepted] = []
    for event, request in answered_submissions(history):
        upload = _upload(event) or _upload(request)
        job_id = event.job_id or event.data.get("job_id")
        if upload is not None and job_id is not None and accepted(event):
            found.append(Accepted(upload, str(job_id), event))
    return found


def _two_uploads(history: History, snapshot: Snapshot | None) -> Missing | None:
    uploads = {a.upload for a in accepted_uploads(history)}
    if len(uploads) >= 2:
        return None
    if uploads:
        return Missing("only one upload (project, file) was accepted: nothing to tell apart")
    return Missing("no accepted submission named its upload (project, file) and its job")


UPLOADS = Need("uploads", "accepted submissions of at least two different uploads (project, file)", _two_uploads)


def _shared_jobs(found: list[Accepted]) -> list[tuple[Accepted, Accepted]]:
    """(first submission of a job, a later one of another upload answered with that job)."""
    first: dict[str, Accepted] = {}
    pairs = []
    for submission in found:
        earlier = first.setdefault(submission.job_id, submission)
        if earlier.upload != submission.upload:
            pairs.append((earlier, submission))
    return pairs


def _violation(history: History, earlier: Accepted, later: Accepted) -> dict[str, Any]:
    return {"job_id": later.job_id, "upload": "/".join(later.upload), "job_of": "/".join(earlier.upload),
            "at": history.relative(later.event.t), "first_at": history.relative(earlier.event.t),
            "status": later.event.data.get("status")}


@invariant(NAME, needs=(UPLOADS,))
def each_upload_its_own_job(history: History, snapshot: Snapshot | None) -> Result:
    """Accepted submissions of different uploads (project, file) are answered with different jobs."""
    found = accepted_uploads(history)
    violations = [_violation(history, a, b) for a, b in _shared_jobs(found)]
    if violations:
        f = violations[0]
        return invalid_result(NAME, f"{len(violations)} upload(s) answered with another upload's job; first: "
                              f"upload {f['upload']} accepted at {f['at']:.3f}s as job {f['job_id']}, the job "
                              f"of upload {f['job_of']} (accepted at {f['first_at']:.3f}s): its own work never "
                              f"runs", violations, judged=len(found))
    uploads = {a.upload for a in found}
    if len(uploads) < 2:
        return unknown_result(NAME, "fewer than two different uploads accepted: nothing to tell apart")
    jobs = {a.job_id for a in found}
    return valid_result(NAME, f"{len(uploads)} different upload(s) accepted as {len(jobs)} job(s), none "
                        f"sharing another upload's job", uploads=len(uploads), jobs=len(jobs), judged=len(found))
