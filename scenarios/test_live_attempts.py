"""A long job's heartbeat must outlive a database blip: a live attempt is never declared dead.

The job runs for several staleness windows (slow model calls, every one
well within its deadline) on the Celery path. Postgres restarts under it
and stays down for two heartbeat intervals: every session is cut, and the
attempt's heartbeat certainly fails a beat or two.
Right: the heartbeat thread logs the missed beat and beats again once the
database is back; the job ends at attempt 1. Bug
``heartbeat-dies-on-db-error``: the heartbeat thread stops for good at its
first database error; the attempt works on, silent, and the sweeper
declares it dead and sends the job again.

The sweeper is held (frozen, a defence switched off) from before the
restart until the heartbeat had two staleness windows of a working
database to come back in: a sweeper that looked earlier would judge a
silence the restart explains. ``no_live_attempt_taken`` sees the bug: the
job was taken from an attempt that was alive (its paid calls went on) and
had a database to beat to, yet did not beat.
"""
from __future__ import annotations

import time

import pytest

from harness import Run, wait_until
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
DOCUMENTS = [f"chapter {i} of the annual report" for i in range(4)]  # within the soft limit, hold included


def heartbeat_at(refapp: RefApp, job_id: str) -> float:
    """The job row's heartbeat, in epoch seconds (refapp's own liveness evidence)."""
    rows = refapp.query("SELECT extract(epoch FROM heartbeat_at)::float8 FROM jobs WHERE id = %s", job_id)
    return rows[0][0] or 0.0


@pytest.mark.catches("heartbeat-dies-on-db-error", invariant="no_live_attempt_taken")
@pytest.mark.jobquake(checks=["no_live_attempt_taken"])
def test_a_long_jobs_heartbeat_beats_again_after_a_database_restart(jq: Run, refapp: RefApp) -> None:
    """Postgres restarts while attempt 1 waits between two documents; its heartbeat comes back.

    Attempt 1 is held before its second document (a control, not a fault:
    it touches no database meanwhile, so the restart cannot fail its own
    writes; its heartbeat thread runs on). Once the heartbeat beat again,
    or stayed silent for two staleness windows, attempt 1 goes on with slow
    calls (0.6 of the model deadline each), and only then the sweeper looks.
    """
    sqs.slow_model_calls(jq, 0.6)  # the only job of this scenario
    stale = sqs.budget(jq, "heartbeat_stale")
    job_id = job_id_for("p-blip", "annual-report.pdf")
    judge = jq.faults.pause_service("sweeper", defence_off=True)
    between = jq.failpoints.arm("task.item", "hang", once=True, match={"job_id": job_id, "attempt": 1, "item": 1})
    assert refapp.submit(DOCUMENTS, project="p-blip", file="annual-report.pdf") == job_id
    between.wait(timeout=MARGIN)  # attempt 1 saved document 0 and waits, alive

    # down for two beats: one certainly meets a refused connection (a fast restart is over between
    # two beats as often as not, and a pre-pinging pool hides it); returns once Postgres is back
    restart = jq.faults.database_restart(down_for=2 * sqs.budget(jq, "heartbeat_interval"))
    restart.heal()
    back = time.time()
    # right: a beat after the restart; bug: silence through two staleness windows of a working database
    wait_until(lambda: heartbeat_at(refapp, job_id) > back or time.time() - back > 2 * stale,
               timeout=2 * stale + MARGIN, what="the heartbeat to beat again, or to stay silent")
    between.heal()  # attempt 1 goes on paying for documents
    jq.paidapi.wait_for_call(job_id, step="doc-1.categorise", timeout=MARGIN)
    judge.heal()  # the sweeper looks now

    job = refapp.wait_for(job_id, timeout=len(DOCUMENTS) * sqs.model_deadline(jq) + MARGIN)
    assert job["attempt"] == 1, job
