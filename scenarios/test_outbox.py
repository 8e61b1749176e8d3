"""The outbox relay crashes halfway, and a status event runs ahead of its write.

The relay moves each outbox row to the queue in two steps: send the
message, mark the row sent. A crash between the two is unavoidable in
principle, so the order decides what a crash costs:

* ``test_a_relay_killed_between_send_and_mark_sends_the_message_again``:
  send first, and a crash sends the message a second time; mark first
  (bug ``outbox-mark-before-send``), and a crash loses it.
* ``test_a_message_sent_twice_runs_the_job_once``: a message sent twice is
  delivered twice, so whoever consumes it must tolerate the repeat (bug
  ``consumer-not-idempotent``: the finished job is claimed and run again).

The same rule, "write first, then tell", holds for the status events users
see: ``test_users_are_never_told_done_for_a_job_whose_final_write_failed``
(bug ``event-before-commit``).

Each crash is a failpoint armed with ``kill``: the relay process SIGKILLs
itself at the seam between its two steps. The scenario restarts it once
the failpoint has fired (the next test's reset would too, but the job must
finish within this scenario).
"""
from __future__ import annotations

import re

import pytest

from harness import Run, wait_until
from harness.faults import Failpoint
from refapp.failpoints import RELAY_BETWEEN_SEND_AND_MARK, TASK_BEFORE_FINAL_WRITE
from refapp.submit import job_id_for
from scenarios.refapp_client import RefApp

DOCUMENTS = ["invoice from ACME, payable in 30 days", "hotel receipt, paid, thank you"]
MARGIN = 10.0  # seconds: generous bounds on waits for a busy machine (outcomes stay strict)


def crash_the_relay_between_send_and_mark(jq: Run, job_id: str) -> Failpoint:
    """Arm the relay to SIGKILL itself once, between the two steps of relaying ``job_id``'s row."""
    return jq.faults.failpoint(RELAY_BETWEEN_SEND_AND_MARK, "kill", once=True, match={"job_id": job_id})


def restart_the_relay_once_dead(jq: Run, crash: Failpoint) -> None:
    """Wait until the relay fired the failpoint and died, then start a fresh one."""
    crash.wait(timeout=MARGIN)
    relay = jq.stack.service("relay")  # a control: restarting is recovery, not a fault
    wait_until(lambda: not relay.is_running(), timeout=MARGIN, what="the relay to die")
    relay.start()  # returns once the new relay says it is ready


def unsent_rows(refapp: RefApp, job_id: str) -> int:
    return int(refapp.query("SELECT count(*) FROM outbox WHERE job_id = %s AND sent_at IS NULL", job_id)[0][0])


@pytest.mark.catches("outbox-mark-before-send", invariant="every_job_terminal")
@pytest.mark.jobquake(settle=False)  # settled below, within a bound chosen for a job this small
def test_a_relay_killed_between_send_and_mark_sends_the_message_again(jq: Run, refapp: RefApp) -> None:
    """A relay crash costs a duplicate send, never a lost one (bug: ``outbox-mark-before-send``).

    Right: the crash rolls back the relay's transaction, so the row is still
    unsent; the restarted relay sends it again; a worker runs the job (the
    duplicate is dropped) and it ends ``done``. Bug: the row was marked sent
    and committed before the send, the crash came before the send, and the
    restarted relay finds nothing to do: the job stays ``queued``.
    """
    # The sweeper re-sends a job that sat queued with no message for `queued_too_long`:
    # it would rescue the lost message and hide the bug. The relay is tested alone.
    jq.faults.stop_service("sweeper")
    job_id = job_id_for("p-relay-crash", "scan.pdf")  # stable: the failpoint can name it first
    crash = crash_the_relay_between_send_and_mark(jq, job_id)
    assert refapp.submit(DOCUMENTS, project="p-relay-crash", file="scan.pdf") == job_id

    restart_the_relay_once_dead(jq, crash)
    # the fresh relay has passed over the outbox: every row is marked sent (right after sending it)
    wait_until(lambda: unsent_rows(refapp, job_id) == 0, timeout=MARGIN, what="the outbox to drain")

    jq.settle(timeout=MARGIN)  # bug: nothing will ever run the job; the invariants name it


# Celery logs both ends of every task: "Task <name>[<task id>] received", then "... succeeded in" / "... raised"
JOB_TASK_LOG = re.compile(r"Task refapp\.process_job\[(?P<task>[^\]]+)\] (?P<what>received|succeeded|raised)")


def deliveries_handled(jq: Run, log_marks: dict[str, int]) -> int:
    """Job tasks a worker both received and finished since ``log_marks``, whatever each did.

    Counting only tasks received after the marks keeps out a message of an
    earlier scenario that a worker had already taken before this one began.
    """
    received: set[str] = set()
    ended: set[str] = set()
    for worker in jq.workers.workers:
        for line in JOB_TASK_LOG.finditer(worker.logs_since(log_marks.get(worker.name, 0))):
            (received if line["what"] == "received" else ended).add(line["task"])
    return len(received & ended)


@pytest.mark.catches("consumer-not-idempotent", invariant="terminal_is_final")
@pytest.mark.jobquake(checks=["terminal_is_final"])
def test_a_message_sent_twice_runs_the_job_once(jq: Run, refapp: RefApp) -> None:
    """A duplicate message for a finished job is dropped (bug: ``consumer-not-idempotent`` reruns it).

    The relay crashes after sending and before marking, and is restarted only
    once the job is ``done``, so the duplicate certainly meets a finished job.
    Right: the claim refuses it ("already done"), the job stays ``done``,
    attempt 1. Bug: the duplicate claims the job again, ``done`` goes back to
    ``running`` (attempt 2), every step is called again, and the job ends
    ``done`` a second time: ``terminal_is_final`` names the reopening.
    """
    log_marks = {worker.name: worker.log_offset() for worker in jq.workers.workers}
    job_id = job_id_for("p-sent-twice", "scan.pdf")
    crash = crash_the_relay_between_send_and_mark(jq, job_id)
    assert refapp.submit(DOCUMENTS, project="p-sent-twice", file="scan.pdf") == job_id

    # the first send went out before the crash: the job runs to its end
    crash.wait(timeout=MARGIN)
    assert refapp.wait_for(job_id, "done", timeout=MARGIN)["attempt"] == 1

    restart_the_relay_once_dead(jq, crash)  # its first pass sends the row a second time
    # both deliveries handled, whatever the second one did; then the state log tells
    wait_until(lambda: deliveries_handled(jq, log_marks) >= 2, timeout=MARGIN,
               what="both deliveries of the job's message to be handled")


@pytest.mark.catches("event-before-commit", invariant="status_events_consistent")
@pytest.mark.jobquake(checks=["status_events_consistent"],
                      options={"status_events_consistent": {"require_final_event": True}})
def test_users_are_never_told_done_for_a_job_whose_final_write_failed(jq: Run, refapp: RefApp) -> None:
    """The final write fails: users hear ``failed``, as the DB says (bug: ``event-before-commit``: ``done``).

    The write of the terminal state ``done`` raises a database error once.
    Right: the event would follow the write, so none was sent; the attempt
    records the failure instead, and users see ``running``, ``failed``.
    Bug: ``done`` was announced before the write that then failed: users were
    told ``done`` while the database says ``failed``.
    """
    events = refapp.listen()  # every status event users receive goes into the history
    job_id = job_id_for("p-final-write", "scan.pdf")
    # an error refapp treats as a failed database write (a dropped connection, a failover)
    broken_write = jq.faults.failpoint(TASK_BEFORE_FINAL_WRITE, "raise", once=True,
                                       match={"job_id": job_id, "state": "done"},
                                       exception="sqlalchemy.exc.OperationalError")
    assert refapp.submit(DOCUMENTS, project="p-final-write", file="scan.pdf") == job_id

    broken_write.wait(timeout=MARGIN)
    assert refapp.wait_for(job_id, timeout=MARGIN)["state"] == "failed"
    # the final event reaches users after the commit: wait for it before the verdict
    wait_until(lambda: "failed" in events.states(job_id), timeout=MARGIN, what="the 'failed' event")
