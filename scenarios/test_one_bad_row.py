"""One row nobody can process must not stop the process that goes over the rows: the relay and the sweeper.

Both of refapp's background loops walk a table: the relay sends the unsent
rows of the outbox, oldest first; the sweeper handles the abandoned jobs,
longest unchanged first. Each is a sweep, and the seeds' rule for sweeps
holds for them: a bad row is that row's problem, counted and set aside; it
must not end the pass, or it comes first again in the next one and every row
behind it waits for ever.

* **An outbox row that can never be sent**: an older release wrote it with
  positional arguments, which the broker's client refuses (``task keyword
  arguments must be a mapping``). It is the oldest unsent row. Right: the
  relay sets it aside with its error and sends the rows behind it.
* **A job the sweeper cannot send again**: a job left running by an old
  release, on a route since retired; a later rule (``NOT VALID``: old rows
  were never checked) allows a job back in the queue only on a route that
  exists. Its heartbeat is long stale, so the sweeper lists it first. Right:
  the sweeper hands it to a person, saying why, and rescues the job behind
  it, whose worker died mid-job and whose message is gone.

Neither needs a fault: the bad row is data the app already holds. Each
scenario settles within the bound its defence needs; a row that blocks the
loop leaves the jobs behind it unfinished, which the global invariants report.
"""
from __future__ import annotations

import json
import uuid

import pytest

from harness import Run
from scenarios import sqs_support as sqs
from scenarios.crash_support import kill_mid_job_and_lose_its_message
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
DOCUMENTS = ["Invoice 12: payable within 30 days", "Dear Sir, regards"]
# a job an old release left running, on a route it has since retired
LEGACY_JOB = ("INSERT INTO jobs (id, project, file, submitted_by, kind, route, state, attempt, heartbeat_at, "
              "created_at, updated_at) VALUES (%s, 'archive', 'scan-0001.tif', 'ana', 'documents', 'fax', "
              "'running', 1, now() - interval '1 day', now() - interval '2 days', now() - interval '1 day')")
LATER_RULE = ("ALTER TABLE jobs ADD CONSTRAINT jobs_queued_route_exists "
              "CHECK (state <> 'queued' OR route IN ('celery', 'sqs')) NOT VALID")


@pytest.mark.catches("relay-head-of-line", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False)  # settled below, within the relay's own bound
def test_an_outbox_row_that_can_never_be_sent_does_not_hold_up_the_rows_behind_it(jq: Run, refapp: RefApp) -> None:
    refapp.execute("INSERT INTO outbox (job_id, destination, payload) VALUES (%s, 'celery', %s)",
                   "legacy-batch-7", json.dumps(["legacy-batch-7", 1]))  # positional arguments
    for n in range(3):
        refapp.submit(DOCUMENTS[:1], project="p-bad-outbox-row", file=f"upload-{n}.pdf")

    jq.settle(timeout=MARGIN)


@pytest.mark.catches("sweeper-no-per-job-isolation", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False)  # settled below, within the sweeper's own bound
def test_a_job_the_sweeper_cannot_send_again_does_not_keep_it_from_the_jobs_behind_it(jq: Run, refapp: RefApp) -> None:
    legacy = str(uuid.uuid5(uuid.NAMESPACE_URL, "refapp:legacy-fax-job"))
    # the rule first: a sweeper pass between the two would send the job again while its route was still
    # allowed, and there would be no bad row left (the running row passes the rule: it is not queued)
    refapp.execute(LATER_RULE)
    refapp.execute(LEGACY_JOB, legacy)
    kill_mid_job_and_lose_its_message(jq, refapp, DOCUMENTS, project="p-behind-legacy")  # only the sweeper can help

    rescue = sqs.budget(jq, "heartbeat_stale") + sqs.budget(jq, "sweeper_interval")
    jq.settle(timeout=rescue + MARGIN)
