"""A worker dies mid-job, while it waits on the model: does the job still end?

The story, in both scenarios below:

1. A user uploads two documents. Before submitting, the scenario puts a
   *gate* on the paid model API for the job's first paid step: the call
   reaches the provider and is held there, so a worker is pinned in the
   middle of the job, blocked on the model.
2. Every Celery worker is SIGKILLed, main process and pool children at
   once: no handler runs, nothing is acknowledged, nothing is cleaned up.
   (The provider cannot tell which worker made the call, so all of them
   die: a lost node, or a deploy that killed the fleet.)
3. The gate is released: the provider finishes the call and bills it, but
   its client is gone.
4. Fresh workers start in the dead ones' places.

The job row now says ``running``, attempt 1, with a heartbeat nobody
renews. Something must notice and run the job again. Which defence does it
depends on whether the job's message survived the crash:

* ``test_a_killed_workers_task_comes_back_from_the_broker``: the message
  survives. Celery acknowledges a task only after it ran (``acks_late``),
  so the dead worker's task is still "unacked" in Redis, and the broker
  hands it out again once its visibility window has passed. The sweeper is
  stopped, because it would rescue the job on its own and hide a lost
  message: this scenario tests the broker's redelivery alone.
* ``test_the_sweeper_rescues_a_job_whose_worker_and_message_are_gone``: the
  broker is flushed too, so no queue will ever hand the job out again. Only
  the sweeper can help: it sees the stale heartbeat, declares attempt 1
  dead and sends the job again.

Either way attempt 2 calls the model for the same step with the same
idempotency key, the provider replays its answer instead of billing again,
and the job ends ``done``. The global invariants judge the outcome: every
job terminal, no paid call billed twice, no accepted submission lost.
"""
from __future__ import annotations

import pytest

from harness import Run
from refapp import budgets
from refapp.submit import job_id_for
from scenarios.crash_support import assert_caught_mid_job, kill_every_worker, start_fresh_workers
from scenarios.refapp_client import RefApp

DOCUMENTS = ["invoice from ACME, payable in 30 days", "hotel receipt, paid, thank you"]
FILE = "scan.pdf"
FIRST_PAID_STEP = "doc-0.categorise"  # refapp's name for the model call of document 0
MARGIN = 10.0  # seconds of slack for a busy machine, on top of the app's own bounds


@pytest.mark.catches("acks-early", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False)  # settled below, within the broker's own bound
def test_a_killed_workers_task_comes_back_from_the_broker(jq: Run, refapp: RefApp) -> None:
    """Broker redelivery alone brings the job back (bug: ``acks-early`` loses it for good).

    With ``acks-early`` Celery acknowledged the task when a worker took it,
    before it ran: the crash took the only copy of the message, and the job
    stays ``running`` for ever.
    """
    # the sweeper would re-send the stale job itself and hide the lost message
    jq.faults.stop_service("sweeper")
    job_id = job_id_for("p-redelivery", FILE)  # stable: the gate can be armed before submitting
    gate = jq.paidapi.gate(job_id=job_id, step=FIRST_PAID_STEP)
    assert refapp.submit(DOCUMENTS, project="p-redelivery", file=FILE) == job_id

    gate.wait(timeout=MARGIN)  # a worker is now blocked on the model
    # (the kill must land within the call's deadline, 1 s here, or the worker gives up on the
    # call by itself and fails the job: the check below would say so)
    kills = kill_every_worker(jq)
    gate.heal()  # the provider finishes and bills; nobody is there to receive the answer
    assert_caught_mid_job(refapp, job_id)
    start_fresh_workers(kills)

    # the task comes back once the visibility window has passed since it was handed out (with the
    # bug it never does: the settle gives up at its bound and the invariants report the stuck job)
    visibility = budgets.scaled("broker_visibility", jq.config.time_scale)
    jq.settle(timeout=visibility + MARGIN)


@pytest.mark.catches("no-sweeper", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False)  # settled below, within the sweeper's own bound
def test_the_sweeper_rescues_a_job_whose_worker_and_message_are_gone(jq: Run, refapp: RefApp) -> None:
    """The sweeper alone brings the job back (bug: ``no-sweeper`` finds nothing).

    Flushing the broker deletes the dead worker's unacknowledged task, so
    redelivery cannot help. With ``no-sweeper`` nothing else looks for jobs
    nobody works on, and the job stays ``running`` for ever.
    """
    job_id = job_id_for("p-sweeper", FILE)
    gate = jq.paidapi.gate(job_id=job_id, step=FIRST_PAID_STEP)
    assert refapp.submit(DOCUMENTS, project="p-sweeper", file=FILE) == job_id

    gate.wait(timeout=MARGIN)
    kills = kill_every_worker(jq)
    jq.stack.redis.reset()  # FLUSHALL: the unacknowledged task is deleted with everything else
    gate.heal()
    assert_caught_mid_job(refapp, job_id)
    start_fresh_workers(kills)

    # the heartbeat goes stale, the next sweeper pass re-sends the job, a fresh worker runs it
    scale = jq.config.time_scale
    rescue = budgets.scaled("heartbeat_stale", scale) + budgets.scaled("sweeper_interval", scale)
    jq.settle(timeout=rescue + MARGIN)
