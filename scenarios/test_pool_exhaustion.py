"""The database pool runs dry between saving a job and queueing it: is the upload still processed?

Saving a job takes two writes: the job row (so the user can see it) and a
message on a queue (so a worker runs it). If they are two separate writes,
something can fail between them, and the user has already been promised a
job. Here that something is the most ordinary production failure there is:
every connection of the API's database pool is busy, so the next checkout
waits for the pool's timeout and gives up.

The story:

1. The scenario arms the failpoint ``submit.after_job_write`` in the API
   process with the action ``exhaust_pool``: when a submission reaches that
   point, right after the job row is saved, the API's own SQLAlchemy pool is
   emptied (every connection checked out and held by the harness).
2. A user uploads a document. The API answers ``202 Accepted``.
3. The fault is healed: the held connections go back to the pool.
4. The scenario waits for the system to settle; the invariants judge.

The right shape (refapp as built) is a *transactional outbox*: the job row
and its message are written in one transaction, so by the time the pool
runs dry both are committed. The relay, a separate process with its own
pool, sends the message; a worker runs the job; it ends ``done``.

The bug (mutant ``dual-write``) saves the job, then enqueues in a second
step that needs the database again (to read the row back). That step waits
for a connection, times out, logs the error, and the request still answers
``202``: a job the user was promised, that no worker will ever see. It
stays ``queued`` for ever, and the global invariants say so:
``no_lost_submission`` (an accepted submission has no terminal job) and
``every_job_terminal``.

Why a failpoint and not the black-box fault ``hold_database_connections``
(every Postgres slot taken)? Connections already in the app's pool keep
working when Postgres refuses new ones, and the separate enqueue reuses the
connection the job write just gave back: the bug would not show, and
whether the submission itself fails depends on what the pool held before.
Emptying the app's own pool at the exact seam is what makes the scenario
deterministic.
"""
from __future__ import annotations

import pytest

from harness import Run
from refapp.failpoints import SUBMIT_AFTER_JOB_WRITE
from refapp.submit import job_id_for
from scenarios.refapp_client import RefApp

PROJECT, FILE = "p-pool", "contract.pdf"
# The harness gives the connections back at heal; this bound only matters if the
# scenario broke before healing. It must outlast the API's pool wait (the
# ``db_pool_wait`` budget: 1 s at the test time scale), or the dual-write enqueue
# would find a connection after all.
HOLD_AT_MOST = 5.0
MARGIN = 10.0  # seconds: a healthy job is done in well under one; a busy machine is slower


@pytest.mark.catches("dual-write", invariant="no_lost_submission")
@pytest.mark.catches("dual-write", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False)  # settled below, within a bound chosen for a job this small
def test_an_accepted_upload_is_processed_although_the_pool_ran_dry_after_the_job_write(jq: Run, refapp: RefApp) -> None:
    """An exhausted pool after the job write loses nothing (bug: ``dual-write`` loses the message)."""
    # The sweeper re-sends a job that sat queued with no message for `queued_too_long`
    # (30 minutes in production):
    # it would rescue the job the bug lost and hide the bug. The outbox is tested alone.
    jq.faults.stop_service("sweeper")

    # The job id is stable (project, file), so the fault can name the job before it exists.
    job_id = job_id_for(PROJECT, FILE)
    dry_pool = jq.faults.exhaust_pool(at=SUBMIT_AFTER_JOB_WRITE, match={"job_id": job_id},
                                      timeout=HOLD_AT_MOST)

    # The user is told "accepted" either way: that answer is the promise being tested.
    assert refapp.submit(["signed contract, 4 pages"], project=PROJECT, file=FILE, expect=202) == job_id
    dry_pool.wait(timeout=MARGIN)  # the pool really was emptied during this request

    dry_pool.heal()  # the connections go back; the API serves normally again

    # Right: the relay sends the outbox row and a worker finishes the job.
    # Bug: no message exists; settling times out and the invariants name the lost job.
    jq.settle(timeout=MARGIN)
