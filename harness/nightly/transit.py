"""Jobs a fault may have lost on their way to a worker, while the defence that sends them again was off.

Two faults destroy messages no task has started yet. A broker outage
(Redis comes back empty) loses every message it held. A ``SIGKILL`` of a
Celery worker's whole process group loses the message the worker had just
taken off the queue but not yet recorded as held: kombu's Redis transport
pops it (``BRPOP``), then records it in ``unacked``, and a kill between the
two leaves it nowhere (celery/celery#7950). No broker redelivery brings
such a message back; only the app's own re-send (a sweeper) can. While a
schedule keeps that defence off, a job lost this way waits for the defence
to return, which is the fault's doing: its bound runs from that return.

The evidence is the job state log, whose every row names the process that
wrote it (``jobquake:<process>:<pid>``). A job a kill may have lost was
waiting for a worker at the kill: its last change before it was written by
a process that is not a worker (the API accepting it, a relay, a sweeper).
A job a worker had changed was in a task: bringing that back is the broker's
redelivery (a late ack), and a job stuck that way is exactly what switching
the defence off exposes. An outage may lose any job's message. Either way a
job some worker changed after the fault was not lost; and a change whose
writer is unknown counts as a worker's, so that it never excuses a job.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from harness.checks.kept_tokens import writer_process
from harness.history import Event
from harness.history import vocabulary as v

KILL = "kill_worker"
OUTAGE = "broker_outage"


@dataclass(frozen=True)
class Loss:
    """A moment messages may have been lost: a fault's record time (monotonic) while a defence was off."""

    t: float
    fault: str  # KILL or OUTAGE
    index: int  # the fault's window in the schedule
    defence: int  # the window of the defence that was off then


@dataclass(frozen=True)
class Change:
    """One row of a job's state log: when (monotonic), and whether a worker wrote it."""

    t: float
    by_worker: bool


def changes_by_job(events: Iterable[Event], workers: Iterable[str]) -> dict[str, list[Change]]:
    """Per job, its state changes in time order, each marked by whether a worker (or an unknown writer) wrote it."""
    names = set(workers)
    found: dict[str, list[Change]] = {}
    for event in events:
        if event.source != v.JOB or event.name != v.STATE or event.job_id is None:
            continue
        process = writer_process(event.data.get("writer"))
        found.setdefault(event.job_id, []).append(Change(event.t, process is None or process in names))
    for changes in found.values():
        changes.sort(key=lambda c: c.t)
    return found


def lost_by(accepted: float, changes: list[Change], losses: Iterable[Loss]) -> Loss | None:
    """The loss that may have taken the job accepted at ``accepted`` with these state ``changes``, if any.

    None for a job the state log does not show yet: no evidence, no excuse.
    """
    if not changes:
        return None
    for loss in losses:
        if accepted > loss.t or any(c.by_worker for c in changes if c.t > loss.t):
            continue  # accepted after it, or a worker had it since: not lost by it
        before = [c for c in changes if c.t <= loss.t]
        if loss.fault == KILL and before and before[-1].by_worker:
            continue  # its task had started: the broker's to bring back
        return loss
    return None
