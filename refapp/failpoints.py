"""Every failpoint refapp marks, by name, so scenarios import the names instead of spelling them.

A failpoint does nothing unless the harness arms it (see ``harness.failpoints``).
Context keys passed at each: ``job_id``, ``attempt``, ``item`` (document or
row index), ``step``, ``row_id``, ``outbox_id``, ``receive_count``.
"""
from __future__ import annotations

from harness.failpoints import failpoint, register_resource

# -- submission (API) ----------------------------------------------------------------
# Inside the submit transaction, after both rows are written, before COMMIT.
SUBMIT_BEFORE_COMMIT = "submit.before_commit"
# After the job is saved. Right shape: after the transaction, before the response;
# dual-write mutant: between the job write and the separate enqueue.
SUBMIT_AFTER_JOB_WRITE = "submit.after_job_write"

# -- outbox relay --------------------------------------------------------------------
# Between sending a message and marking its outbox row sent (whatever the order).
RELAY_BETWEEN_SEND_AND_MARK = "relay.between_send_and_mark"

# -- one attempt of a job (Celery task or SQS consumer thread) -----------------------
TASK_CLAIM_READ = "task.claim_read"               # a delivery read the job's row, its claim not written yet
TASK_CLAIMED = "task.claimed"                     # the attempt owns the job, nothing done yet
TASK_ITEM = "task.item"                           # before each document / row
TASK_BEFORE_PAID_CALL = "task.before_paid_call"   # before "already done?" and the paid call
TASK_AFTER_PAID_CALL = "task.after_paid_call"     # paid call answered, result not saved yet
TASK_BEFORE_FINAL_WRITE = "task.before_final_write"  # just before the terminal state is written
TASK_AFTER_STATUS_EVENT = "task.after_status_event"  # just after the status event is published
HEARTBEAT_WRITTEN = "attempt.heartbeat_written"  # a heartbeat is written, its transaction still open

# -- overdue-invoice sweep -----------------------------------------------------------
SWEEP_ROW = "sweep.row"                           # per invoice, inside its transaction

# -- SQS consumer --------------------------------------------------------------------
CONSUMER_RECEIVED = "consumer.received"           # a message was received, before anything
CONSUMER_HEARTBEAT = "consumer.heartbeat"         # each heartbeat tick of an attempt
CONSUMER_BEFORE_DELETE = "consumer.before_delete"  # the job is finished, the message not deleted
CONSUMER_QUEUES_GONE = "consumer.queues_gone"     # a receive found no queue; before making them again

# -- abandoned-job sweeper -----------------------------------------------------------
SWEEPER_TICK = "sweeper.tick"                     # start of each sweeper pass
SWEEPER_HANDLING = "sweeper.handling"             # a listed job, before it is locked and judged again
SWEEPER_BEFORE_RESEND = "sweeper.before_resend"   # a stale job is about to be sent again
SWEEPER_RESENT = "sweeper.resent"                 # the sweeper's change committed, its status event not sent

# every name above, for scenarios that sweep them all
ALL: tuple[str, ...] = tuple(
    value for key, value in dict(globals()).items() if key.isupper() and isinstance(value, str)
)

__all__ = ["ALL", "failpoint", "register_resource"]
