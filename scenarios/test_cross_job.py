"""One user's job must never be answered with another's: same step names, same file names, different content.

Every refapp job of documents has the same paid steps (``doc-0.categorise``,
``doc-1.categorise``, ...), and two projects may each upload an
``invoice.pdf``. Whatever makes a job's answers its own (the job in the
"already done?" lookup, in the idempotency key, the project in the job id)
is invisible while one job runs alone, and racy while several start at
once: a job can only reuse an answer that exists when it asks. So here the
first user's job ends before the two others are submitted together, with
the same step names, one with the same file name, and documents of their
own (the provider's answer depends on the prompt, so a reused answer is
another document's).

No fault is injected: the bugs are in the app's keys. The generic
invariants judge it: ``results_have_provenance`` (each result a done job
shows comes from a call of that job, or a replay of its own key) and
``each_upload_its_own_job`` (two different uploads are never answered with
one job).
"""
from __future__ import annotations

import pytest

from harness import Run
from scenarios.many_users import UPLOADS, submit_all
from scenarios.refapp_client import RefApp

MARGIN = 20.0  # seconds a job of two documents may take on a busy machine


@pytest.mark.catches("step-cache-ignores-job", invariant="results_have_provenance")
@pytest.mark.catches("idempotency-key-without-job", invariant="results_have_provenance")
@pytest.mark.catches("job-id-ignores-project", invariant="each_upload_its_own_job")
@pytest.mark.jobquake(checks=["results_have_provenance", "each_upload_its_own_job"])
def test_jobs_after_another_users_job_get_answers_of_their_own(jq: Run, refapp: RefApp) -> None:
    """Ana's ``acme-books/invoice.pdf`` ends ``done``; then Ben (``initech-tax/invoice.pdf``) and Cho upload.

    Right: each of the three uploads is its own job, and each job's saved
    answers name calls made for that job. Bugs: ``step-cache-ignores-job``
    finds Ana's saved answer for ``doc-0.categorise`` and shows it as Ben's
    and Cho's, with no call of their own; ``idempotency-key-without-job``
    sends Ana's key, and the provider replays Ana's answer;
    ``job-id-ignores-project`` answers Ben's upload with Ana's job, done
    already, so Ben's documents are never read.
    """
    [first] = submit_all(refapp, UPLOADS[:1])
    refapp.wait_for(first, timeout=MARGIN)

    later = submit_all(refapp, UPLOADS[1:])
    for job_id in later:
        refapp.wait_for(job_id, timeout=MARGIN)
