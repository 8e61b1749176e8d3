"""Status streams over time: what a person watching a job, and a dashboard watching every job, are told.

refapp sends a job's status as server-sent events: ``/jobs/{id}/events``
(one job, ending at its terminal state) and ``/events`` (every job, the
dashboard's), relayed from Redis after each commit. The harness reads both
as a browser would (the dashboard's for every test, config
``status_stream``; a job's with ``jq.streams.job``), reconnecting with
``Last-Event-ID``, and ``streams_agree_with_db`` holds them to the job
state log: states in the database's order, none it did not have, the final
one in the end, and no job's stream ended before its job did.

* **A job given back to the queue** (SQS path, the provider fails the first
  attempt's call): the job's stream goes on to the next attempt and its end.
  Bug ``stream-ends-on-requeue``: it ends at "queued", as if the job were over.
* **Events lost while Redis is away**: the job ends while the broker is
  down, so its end is published into nothing. Right: every stream catches
  up from the database (``stream_recheck``). Bugs ``stream-trusts-events``
  (no stream ever does) and ``dashboard-reconciles-active-only`` (the
  dashboard catches up on jobs still in progress only).
* **A sweeper's late news**: the sweeper re-sends a job whose worker died and
  publishes its "queued" only after the next attempt finished it. Right: the
  dashboard drops news older than what it told. Bug
  ``stream-forwards-stale-event``: the dashboard goes back to "queued" and
  stays there.
* **A dashboard that reconnects**: the API restarts while a job ends; the
  dashboard reconnects with the id of the last event it got, after longer
  than a stream looks back on its own. Right: it is first told what changed
  meanwhile. Bug ``all-events-ignores-last-event-id``:
  it hears of new changes only, and the job never ends on its screen.
"""
from __future__ import annotations

import time

import pytest

from harness import Run, wait_until
from refapp.failpoints import SWEEPER_RESENT
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs
from scenarios.crash_support import kill_mid_job_and_lose_its_message
from scenarios.refapp_client import TERMINAL, RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
FIRST_PAID_STEP = "doc-0.categorise"
DOCUMENTS = ["Invoice 12: payable within 30 days", "Dear Sir, regards"]
STREAMS = ["streams_agree_with_db"]


def database_state(refapp: RefApp, job_id: str) -> str | None:
    """The job's state read from the database directly (the API may be down)."""
    rows = refapp.query("SELECT state FROM jobs WHERE id = %s", job_id)
    return str(rows[0][0]) if rows else None


def ended(refapp: RefApp, job_id: str) -> bool:
    """The job is in a final state, whichever: a call held across a fault's start may outlast the app's
    model-call deadline on a busy machine (stopping the API took 1.5 s under load), and the job then
    fails as a timeout instead of ending done. Either end must reach every screen, which is the claim."""
    return database_state(refapp, job_id) in TERMINAL


@pytest.mark.catches("stream-ends-on-requeue", invariant="streams_agree_with_db")
@pytest.mark.jobquake(checks=STREAMS)
def test_a_jobs_stream_follows_it_back_to_the_queue_and_to_its_end(jq: Run, refapp: RefApp) -> None:
    """The provider fails attempt 1's only call: the job goes back to the queue, attempt 2 ends it ``done``."""
    job_id = job_id_for("p-stream-requeue", "contract.pdf")
    jq.faults.paidapi_mode("fail", job_id=job_id, count=1)
    assert refapp.submit(DOCUMENTS[:1], project="p-stream-requeue", file="contract.pdf", route="sqs") == job_id
    watcher = jq.streams.job(job_id)

    job = refapp.wait_for(job_id, timeout=MARGIN + 2 * sqs.redelivery_bound(jq))
    assert job["attempt"] >= 2, job  # it went back to the queue at least once
    wait_until(lambda: watcher.told.terminal, timeout=MARGIN, what="the job's stream to tell its end")


@pytest.mark.catches("stream-trusts-events", invariant="streams_agree_with_db")
@pytest.mark.catches("dashboard-reconciles-active-only", invariant="streams_agree_with_db")
@pytest.mark.jobquake(checks=STREAMS)
def test_a_job_that_ends_while_redis_is_away_still_ends_on_every_screen(jq: Run, refapp: RefApp) -> None:
    """SQS path (Redis carries only the status events): the job ends while Redis is down."""
    job_id = job_id_for("p-stream-lost", "report.pdf")
    gate = jq.paidapi.gate(job_id=job_id, step=FIRST_PAID_STEP)
    assert refapp.submit(DOCUMENTS[:1], project="p-stream-lost", file="report.pdf", route="sqs") == job_id
    jq.streams.job(job_id)
    gate.wait(timeout=MARGIN)

    outage = jq.faults.broker_outage()  # the "running" went out; whatever comes next goes nowhere
    gate.heal()
    wait_until(lambda: ended(refapp, job_id), timeout=MARGIN, what="the job to end")
    outage.heal()


@pytest.mark.catches("stream-forwards-stale-event", invariant="streams_agree_with_db")
@pytest.mark.jobquake(checks=STREAMS)
def test_the_sweepers_late_news_does_not_take_a_finished_job_back_on_the_dashboard(jq: Run, refapp: RefApp) -> None:
    """The sweeper re-sends a job whose worker and message are gone; its "queued" comes after attempt 2's "done"."""
    job_id = job_id_for("p-stream-stale", "ledger.pdf")
    late = jq.faults.failpoint(SWEEPER_RESENT, "hang", once=True, match={"job_id": job_id})
    kill_mid_job_and_lose_its_message(jq, refapp, DOCUMENTS, project="p-stream-stale", file="ledger.pdf")

    late.wait(timeout=MARGIN)  # the sweeper's re-send is committed; its status event waits
    wait_until(lambda: database_state(refapp, job_id) == "done", timeout=MARGIN, what="attempt 2 to end the job")
    late.heal()  # the news of attempt 1 arrives after the end of attempt 2


@pytest.mark.catches("all-events-ignores-last-event-id", invariant="streams_agree_with_db")
@pytest.mark.jobquake(checks=STREAMS)
def test_a_dashboard_back_from_an_api_restart_is_told_what_it_missed(jq: Run, refapp: RefApp) -> None:
    """The API stops while a job's call is held; the job ends; the API comes back and the dashboard reconnects."""
    job_id = job_id_for("p-stream-resume", "minutes.pdf")
    gate = jq.paidapi.gate(job_id=job_id, step=FIRST_PAID_STEP)
    assert refapp.submit(DOCUMENTS[:1], project="p-stream-resume", file="minutes.pdf") == job_id
    gate.wait(timeout=MARGIN)
    dashboard = jq.streams.all_jobs()
    assert dashboard is not None, "config names the all-jobs stream (status_stream)"
    wait_until(lambda: dashboard.told.last.get(job_id, (None,))[0] == "running", timeout=MARGIN,
               what="the dashboard to show the job running")

    restart = jq.faults.stop_service("api")  # every stream ends; the dashboard keeps trying to reconnect
    gate.heal()
    wait_until(lambda: ended(refapp, job_id), timeout=MARGIN, what="the job to end")
    # the API stays away longer than a stream looks back when it catches up on its own (stream_overlap):
    # past that, only the dashboard's Last-Event-ID can tell it what it missed
    back = time.monotonic() + sqs.budget(jq, "stream_overlap") + 2 * sqs.budget(jq, "stream_recheck")
    wait_until(lambda: time.monotonic() >= back, timeout=MARGIN, what="the API's time away")
    restart.heal()

