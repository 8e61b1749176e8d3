"""A user told "not accepted" must find nothing saved, nothing run, nothing billed.

The user who is refused tries again (or gives up); a job saved behind that
answer runs and bills anyway, and the retry is a second job, or a second
bill. Three ways an upload meets trouble while it is being saved:

* **the API's pool is dry when the upload arrives** (``exhaust_pool`` at the
  API's first checkout): the save cannot get a connection, times out, and
  the user is told 503; once the pool is back, the retry is accepted.
* **the save is slower than the API's deadline** (``submit_deadline``: the
  commit is held at ``submit.before_commit``): the user is told 503 at the
  deadline, so the save may no longer commit. Bug
  ``submit-timeout-keeps-saving``: the answer is sent and the save goes on
  and commits; the job runs behind the user's back, and the user's retry
  finds it already there.
* **the connection breaks at the COMMIT** (the API's commit raises a
  database error after it has taken): only the database knows whether the
  job is saved, so the API looks. Right: it is, and the user is told 202.
  Bug ``commit-error-answered-refused``: the error is taken for "not saved"
  and answered 503, for a job that runs and bills.

``refused_submission_leaves_nothing`` (switched on by a refused submission)
compares each answer with the job table's inserts and the ledger.
"""
from __future__ import annotations

import pytest

from harness import Run, wait_until
from refapp.api import ROLLED_BACK
from refapp.failpoints import SUBMIT_BEFORE_COMMIT
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
DOCUMENT = ["signed delivery note"]
INVARIANT = "refused_submission_leaves_nothing"
MAX_DOCUMENTS = 95  # refapp's REFAPP_MAX_DOCUMENTS default: one more is refused with 413


def jobs_saved(refapp: RefApp, job_id: str) -> int:
    return int(refapp.query("SELECT count(*) FROM jobs WHERE id = %s", job_id)[0][0])


def test_an_upload_refused_while_the_pool_is_dry_is_not_saved_and_its_retry_is(jq: Run, refapp: RefApp) -> None:
    """The API's pool is emptied at its first checkout for the upload: 503, nothing saved; the retry: 202."""
    job_id = job_id_for("p-dry-pool", "scan.pdf")
    hold = sqs.budget(jq, "db_pool_wait") + MARGIN  # outlasts the API's pool wait: the checkout gives up
    dry = jq.faults.exhaust_pool("sqlalchemy.pool_checkout", match={"process": "api"}, timeout=hold)
    refapp.submit(DOCUMENT, project="p-dry-pool", file="scan.pdf", expect=503)
    dry.wait(timeout=MARGIN)  # the pool really was emptied during this request
    dry.heal()

    assert jobs_saved(refapp, job_id) == 0
    assert refapp.submit(DOCUMENT, project="p-dry-pool", file="scan.pdf") == job_id  # the user tries again
    assert refapp.wait_for(job_id, timeout=MARGIN)["state"] == "done"


@pytest.mark.catches("submit-timeout-keeps-saving", invariant=INVARIANT)
@pytest.mark.jobquake(checks=[INVARIANT])
def test_a_save_slower_than_the_deadline_is_refused_and_never_committed(jq: Run, refapp: RefApp) -> None:
    """The commit is held past the API's deadline: 503, and the save it gave up on is rolled back."""
    job_id = job_id_for("p-slow-commit", "scan.pdf")
    deadline = sqs.budget(jq, "submit_deadline")
    api = jq.stack.service("api")
    since = api.log_offset()
    slow = jq.faults.failpoint(SUBMIT_BEFORE_COMMIT, "sleep", seconds=deadline + 1.0, once=True,
                               match={"job_id": job_id})
    refapp.submit(DOCUMENT, project="p-slow-commit", file="scan.pdf", expect=503)
    slow.wait(timeout=MARGIN)
    # the held save ends: rolled back (right), or committed behind the answer (bug)
    wait_until(lambda: ROLLED_BACK in api.logs_since(since) or jobs_saved(refapp, job_id),
               timeout=deadline + MARGIN, what="the save the API gave up on to end")

    assert refapp.submit(DOCUMENT, project="p-slow-commit", file="scan.pdf") == job_id  # the user tries again
    assert refapp.wait_for(job_id, timeout=MARGIN)["state"] == "done"


@pytest.mark.catches("commit-error-answered-refused", invariant=INVARIANT)
@pytest.mark.jobquake(checks=[INVARIANT])
def test_an_error_at_the_commit_is_answered_from_the_database(jq: Run, refapp: RefApp) -> None:
    """The API's commit raises after it took: the API finds the job saved and answers 202.

    Another user's upload is too big and refused (413) meanwhile: every
    refusal is held to its answer, this one as much as any.
    """
    refapp.submit(["page"] * (MAX_DOCUMENTS + 1), project="p-commit-error", file="huge.pdf", expect=413)
    job_id = job_id_for("p-commit-error", "scan.pdf")
    broken = jq.faults.failpoint("sqlalchemy.after_commit", "raise", once=True, match={"process": "api"},
                                 exception="sqlalchemy.exc.OperationalError")
    refapp.submit(DOCUMENT, project="p-commit-error", file="scan.pdf", expect=None)  # judged by the invariant
    broken.wait(timeout=MARGIN)
    assert refapp.wait_for(job_id, timeout=MARGIN)["state"] == "done"  # saved either way: the answer must say so
