"""A worker freezes holding its job's row, and a message arrives twice while its job runs.

Two ways a second attempt can meet a first one that is still alive, on the
Celery path with the sweeper on:

* **a frozen worker** (``pause_service``: SIGSTOP, as a long GC pause or a
  frozen VM would), frozen at the worst moment: its heartbeat has written
  the job's row and not committed yet, so the row stays locked. Postgres
  cannot tell a frozen client from a slow one; until the database ends
  that transaction (refapp bounds how long an attempt's transaction may
  sit idle, ``db_idle_in_transaction``) the sweeper skips the locked row
  and a claim waits for it. Then the job stops heartbeating, the sweeper
  declares attempt 1 dead and sends the job again; attempt 2 runs on the
  other worker and finishes. When the frozen worker wakes up, attempt 1
  must change nothing. Bug ``sweeper-judges-by-start-time``: the sweeper
  calls a job abandoned when it *started* long ago, so it also takes
  attempt 2 away while attempt 2 is working, then attempt 3, and the job
  ends with a person.
* **a duplicate message**: the relay's write marking a job's message sent
  fails after the send, and its next pass sends it again while the job is
  running. Right: the second delivery finds the job in the hands of
  a live attempt (fresh heartbeat) and leaves it. Bug
  ``claim-steals-live-job``: any delivery claims a running job: attempt 2
  takes it over and attempt 1's work is thrown away.

A frozen worker can also swallow the message that rescues its job: when it
froze with a Redis BRPOP pending (its idle pool slot asks for work that
way, a second at a time), the re-sent message goes to its socket, neither
in the queue nor in the unacked set, until it wakes. The job is rescued
all the same, later: the frozen worker never acknowledged the job's first
message, so the broker hands that one to the other worker once its
visibility window has passed. The wait's bound allows for that.

``no_overlapping_attempts`` judges from the provider's ledger and the
job's state log, the global invariants the rest. Both bugs mostly show in
the outcome, not as an overlap (the fence stops the older attempt before
it shows life again): ``no_live_attempt_taken`` sees them where they
happen, a job taken from an attempt whose heartbeat was fresh.
"""
from __future__ import annotations

import pytest

from harness import Run, wait_until
from refapp.failpoints import HEARTBEAT_WRITTEN, RELAY_BETWEEN_SEND_AND_MARK
from refapp.submit import job_id_for
from scenarios import sqs_support as sqs
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
DOCUMENTS = [f"page {i} of the annual report" for i in range(5)]


def worker_of(jq: Run, pid: int, what: str) -> str:
    """The name of the worker whose process tree holds ``pid`` (which did ``what``)."""
    holder = jq.workers.holding(pid)
    assert holder is not None, f"no worker's process tree holds pid {pid} ({what})"
    return holder.name


# The overlap of sweeper-judges-by-start-time shows only when attempt 3 starts while attempt 2's call
# is in flight (more often the fence stops attempt 2 first); no_live_attempt_taken sees it every time:
# the sweeper takes the job from attempt 2 while attempt 2's heartbeat is fresh.
@pytest.mark.catches("sweeper-judges-by-start-time", invariant="no_live_attempt_taken")
@pytest.mark.jobquake(checks=["no_overlapping_attempts", "no_live_attempt_taken"])
def test_a_frozen_workers_job_is_finished_by_another_and_the_frozen_one_changes_nothing(
        jq: Run, refapp: RefApp) -> None:
    """The worker running a five-document job freezes with the job's row locked; the sweeper rescues the job.

    The freeze comes at attempt 1's first heartbeat once its first paid
    call is in flight, held at the failpoint between its write and its
    commit (the call is then in flight, or done and waiting for the row to
    save its answer). Slow model calls (0.6 of the deadline each) make the
    job outlast the stale-heartbeat bound, frozen or not: only a sweeper
    that reads the heartbeat leaves the running attempts alone.
    """
    sqs.slow_model_calls(jq, 0.6)  # the only job of this scenario
    job_id = job_id_for("p-frozen", "report.pdf")
    assert refapp.submit(DOCUMENTS, project="p-frozen", file="report.pdf") == job_id
    # armed once the first call is in flight: a heartbeat held before it (on a busy machine the claim's
    # thread can beat before the job's first call) froze attempt 1 between its fence check and its call,
    # which it then made on waking, after attempt 2 had begun
    jq.paidapi.wait_for_call(job_id, step="doc-0.categorise", attempt=1, timeout=MARGIN)
    beat = jq.faults.failpoint(HEARTBEAT_WRITTEN, "hang", once=True, match={"job_id": job_id, "attempt": 1})

    held = beat.wait(timeout=MARGIN)[0]  # the heartbeat's transaction is open: the job's row is locked
    frozen = jq.faults.pause_service(worker_of(jq, held["pid"], "attempt 1's heartbeat"))
    beat.heal()  # the frozen worker sees it when it wakes
    # the database ends the frozen transaction, the heartbeat is stale, the sweeper sends the job again,
    # the other worker finishes it; or, when the frozen worker's pending BRPOP swallowed that message,
    # the broker restores the job's first one
    resent = sum(sqs.budget(jq, name) for name in ("db_idle_in_transaction", "heartbeat_stale", "sweeper_interval"))
    restored = sqs.budget(jq, "broker_visibility") + sqs.budget(jq, "broker_restore_interval")
    bound = max(resent, restored) + len(DOCUMENTS) * sqs.model_deadline(jq) + MARGIN
    job = refapp.wait_for(job_id, timeout=bound)
    frozen.heal()  # attempt 1 wakes up, fenced out
    assert (job["state"], job["attempt"]) == ("done", 2), job


# The stolen attempt 1 of claim-steals-live-job is fenced out at its next write or paid call, so it
# shows no sign of life after attempt 2 starts (no overlap); no_live_attempt_taken sees the claim
# itself: attempt 2 took the job while attempt 1's heartbeat was fresh.
@pytest.mark.catches("claim-steals-live-job", invariant="no_live_attempt_taken")
@pytest.mark.jobquake(checks=["no_overlapping_attempts", "no_live_attempt_taken"])
def test_a_message_delivered_again_while_its_job_runs_leaves_the_running_attempt_alone(jq: Run, refapp: RefApp) -> None:
    """The relay sends a running job's message a second time; the live attempt keeps the job.

    The relay's write marking the row sent fails once, after the send (the
    database went away between the two): the row is still unsent, and the
    relay's next pass sends it again. Attempt 1 is held before its second
    document (alive: its heartbeat beats) until the second delivery has been
    handled, so the duplicate certainly meets a running job.
    """
    job_id = job_id_for("p-twice-running", "report.pdf")
    held = jq.faults.failpoint("task.item", "hang", once=True, match={"job_id": job_id, "attempt": 1, "item": 1})
    marks = {w.name: w.log_offset() for w in jq.workers.workers}
    jq.faults.failpoint(RELAY_BETWEEN_SEND_AND_MARK, "raise", once=True, match={"job_id": job_id},
                        exception="sqlalchemy.exc.OperationalError")
    assert refapp.submit(DOCUMENTS, project="p-twice-running", file="report.pdf") == job_id

    held.wait(timeout=MARGIN)  # attempt 1 is running, and holds on
    wait_until(lambda: refapp.job(job_id)["attempt"] > 1 or left_alone(jq, marks),
               timeout=MARGIN, what="the second delivery to be handled")
    held.heal()

    job = refapp.wait_for(job_id, timeout=MARGIN)
    assert (job["state"], job["attempt"]) == ("done", 1), job


def left_alone(jq: Run, marks: dict[str, int]) -> bool:
    """A worker logged that a delivery found the job in a live attempt's hands (refapp: "in hand")."""
    return any("in hand" in w.logs_since(marks.get(w.name, 0)) for w in jq.workers.workers)
