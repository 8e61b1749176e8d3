"""Accepting an upload: the fast checks, a stable job id, and one transaction for job and message.

What stays in the request is what the user must see at once ("too big",
"not allowed"). Everything slow goes to a worker. The job row and its
outbox message are written in one transaction, so an accepted job always
has a message on its way (the relay sends it) and a failed request leaves
neither. The job id comes from (project, file): the same upload submitted
twice is the same job, and the second submission starts nothing.

The answer must agree with the database: a request that gives up waiting
(``submit_deadline``) tells the user "not accepted", so the save it gave up
on may no longer commit. ``SaveWindow`` is where the request and the saving
thread agree on that: the save commits only if the request has not given
up, and once the commit has begun the request waits for it instead.
"""
from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from refapp import dispatch, imports, jobstore, settings
from refapp.db import engine
from refapp.failpoints import SUBMIT_AFTER_JOB_WRITE, SUBMIT_BEFORE_COMMIT, failpoint
from refapp.mutants import mutant

log = logging.getLogger(__name__)

JOB_NAMESPACE = uuid.UUID("6f1c2a52-5d0e-4a8e-9a59-0f8f4f1b7c3e")
KINDS = ("documents", "import")


class Rejected(Exception):
    """A submission refused before any work: ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class SaveAbandoned(Exception):
    """The request gave up on this save before it committed: it was rolled back, nothing is saved."""


class SaveWindow:
    """Whether a save may still commit: the waiting request and the saving thread agree on one outcome."""

    OPEN, COMMITTING, ABANDONED = "open", "committing", "abandoned"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.state = self.OPEN

    def begin_commit(self) -> bool:
        """Called by the save right before COMMIT; False when the request already gave up on it."""
        with self._lock:
            if self.state == self.ABANDONED:
                return False
            self.state = self.COMMITTING
            return True

    def abandon(self) -> bool:
        """Called by the request at its deadline; False when the commit has begun (its outcome stands)."""
        with self._lock:
            if self.state == self.COMMITTING:
                return False
            self.state = self.ABANDONED
            return True

    @property
    def committing(self) -> bool:
        """The save reached its COMMIT: after an error there, whether it took is unknown until looked up."""
        return self.state == self.COMMITTING


@dataclass(frozen=True)
class Submission:
    """A checked upload."""

    project: str
    file: str
    user: str
    kind: str
    route: str
    payloads: tuple[str, ...]


def job_id_for(project: str, file: str) -> str:
    """The job id of an upload: the same (project, file) always gives the same id."""
    if mutant("unstable-job-id"):
        return str(uuid.uuid4())  # the wrong shape: a second click is a second job
    if mutant("job-id-ignores-project"):
        return str(uuid.uuid5(JOB_NAMESPACE, file))  # the wrong shape: "invoice.pdf" of two projects is one job
    return str(uuid.uuid5(JOB_NAMESPACE, f"{project}\x00{file}"))


def check(body: Any, config: settings.Settings) -> Submission:
    """The fast checks; Rejected (4xx) when the upload cannot be accepted as sent."""
    if not isinstance(body, dict):
        raise Rejected(400, "the body must be a JSON object")
    user = body.get("user")
    if not isinstance(user, str) or not user:
        raise Rejected(401, "say who you are: 'user' is required")
    project, file = body.get("project"), body.get("file")
    if not (isinstance(project, str) and project and isinstance(file, str) and file):
        raise Rejected(400, "'project' and 'file' are required strings")
    if config.allowed_users and user not in config.allowed_users:
        raise Rejected(403, f"user {user!r} may not submit jobs")
    kind = body.get("kind", "documents")
    route = body.get("route", config.default_route)
    if kind not in KINDS:
        raise Rejected(400, f"'kind' must be one of {', '.join(KINDS)}")
    if route not in dispatch.DESTINATIONS:
        raise Rejected(400, f"'route' must be one of {', '.join(dispatch.DESTINATIONS)}")
    payloads = _documents(body) if kind == "documents" else _csv_rows(body)
    if len(payloads) > config.max_documents and kind == "documents":
        raise Rejected(413, f"{len(payloads)} documents: at most {config.max_documents} per upload; split it")
    return Submission(project=project, file=file, user=user, kind=kind, route=route, payloads=payloads)


def _documents(body: dict[str, Any]) -> tuple[str, ...]:
    documents = body.get("documents")
    if not isinstance(documents, list) or not documents or not all(isinstance(d, str) for d in documents):
        raise Rejected(400, "'documents' must be a non-empty list of strings")
    return tuple(documents)


def _csv_rows(body: dict[str, Any]) -> tuple[str, ...]:
    text = body.get("csv")
    if not isinstance(text, str):
        raise Rejected(400, "'csv' must be a string")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or tuple(f.strip() for f in lines[0].split(",")) != imports.HEADER:
        raise Rejected(400, f"the CSV must start with the header {','.join(imports.HEADER)}")
    if len(lines) < 2:
        raise Rejected(400, "the CSV has no rows")
    return tuple(lines[1:])


def submit(sub: Submission, window: SaveWindow | None = None) -> tuple[str, bool]:
    """Save the job (and its message, in the same transaction); (job id, newly created).

    SaveAbandoned (rolled back) when ``window`` was abandoned before the commit.
    """
    job_id = job_id_for(sub.project, sub.file)
    window = window or SaveWindow()
    with engine().begin() as conn:
        created = jobstore.insert_job(conn, job_id=job_id, project=sub.project, file=sub.file,
                                      user=sub.user, kind=sub.kind, route=sub.route, payloads=sub.payloads)
        if created and not mutant("dual-write"):
            jobstore.add_outbox(conn, job_id, sub.route, dispatch=1)
        failpoint(SUBMIT_BEFORE_COMMIT, job_id=job_id)
        if not window.begin_commit():  # the user was told "not accepted": leave nothing behind
            raise SaveAbandoned(f"job {job_id}: the request stopped waiting before the commit; rolled back")
    failpoint(SUBMIT_AFTER_JOB_WRITE, job_id=job_id)
    if created and mutant("dual-write"):
        _enqueue_separately(job_id)
    return job_id, created


def _enqueue_separately(job_id: str) -> None:
    """The dual-write mutant's second write: build the message from the saved row and send it."""
    try:
        with engine().connect() as conn:
            job = jobstore.get_job(conn, job_id)
        dispatch.send(job["route"], {"job_id": job_id, "dispatch": 1})
    except Exception:  # noqa: BLE001 - the wrong shape: logged, and the request still says OK
        log.exception("job %s saved but not enqueued", job_id)
