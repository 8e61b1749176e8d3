"""Invariant: a job whose paid call never answered ends at the configured per-call deadline.

``timeout_labelled`` asks whether a timeout *says* it is one; this asks
whether it came *when it should*: a per-call deadline that is set but never
read (the budget table's default used instead), or no deadline at all, still
ends in a job labelled ``timeout:`` — only later, or never.

Judged per job, from its last paid call (by start time), when either

* the provider saw that call outlast ``deadline + slack`` (it ended that
  long after it started, or had not ended by then, as far as the last
  event or the final snapshot shows): the client should have given up at
  the deadline; or
* the job's final reason contains ``label`` (default ``"timeout"``,
  case-insensitive): the app says it gave up. This is the only evidence
  when the answer was lost on the network: the provider answered in time
  and its ledger cannot tell that nobody received the answer.

The clock runs from the call's start in the provider's ledger to the first
sign that the app stopped waiting for it: a ``write`` event of the job's
attempt (e.g. the failed item's row, which a scenario can record from the
app's tables) or the job's terminal state in the database's state log,
whichever comes first, dated by its statement time (when the app acted
after the call, not when its transaction started or committed: ordering
against a paid call). The ledger's own end of the call is no use here: a
hung call ends when the hang is healed, and a call whose answer was lost
on the network ended in time on the provider's side. That span must be within ``slack`` of ``deadline``
(``slack``, default a tenth of the deadline, absorbs the work between the
client giving up and the write). Too late, or no such sign at all, is a
violation. Too early is one only when the reason says timeout (the app's
own clock fired early); a call cut short by something else (a connection
closed, a worker killed) is not this invariant's business. Without
``deadline`` the verdict is unknown.

Meant for scenarios where the per-call deadline is what ends a job (a hung
or unanswered endpoint, one call per attempt); a batch budget that ends a
job in the middle of a call would be reported as an early end.
"""
from __future__ import annotations

from typing import Any

from harness.checks.needs import PAID_CALLS
from harness.checks.paid_calls import PaidCall, calls_by_job
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, Snapshot

NAME = "deadline_honoured"
DEFAULT_SLACK = 0.1  # of the deadline


def _final_reason(history: History, snapshot: Snapshot | None, job_id: str) -> str | None:
    row = snapshot.job(job_id) if snapshot is not None else None
    if row is not None:
        return row.reason
    states = [e for e in history.by_job(job_id) if e.source == v.JOB and e.name == v.STATE]
    return states[-1].data.get("reason") if states else None


def _stopped_waiting(event: Event, call: PaidCall, terminal: tuple[str, ...]) -> bool:
    """The event shows the app had stopped waiting for ``call``: a write of its attempt, or the end."""
    if event.t <= call.t_start:  # a write at the very moment the call starts belongs to before it
        return False
    if event.source == v.WRITE:
        return call.attempt is None or event.attempt is None or event.attempt == call.attempt
    return event.source == v.JOB and event.name == v.STATE and event.data.get("state") in terminal


def _ended_at(history: History, call: PaidCall, terminal: tuple[str, ...]) -> float | None:
    """When the app stopped waiting for the job's last call (None: no sign that it ever did)."""
    return min((e.t for e in history.by_job(str(call.job_id)) if _stopped_waiting(e, call, terminal)),
               default=None)


def _observed_until(history: History, snapshot: Snapshot | None) -> float:
    """The last moment the evidence covers: the last event, or the final snapshot if taken later."""
    last = history.last()
    if last is None or snapshot is None or not snapshot.taken_at_wall:
        return history.end
    return max(history.end, snapshot.taken_at_wall - last.wall + last.t)


def _judge(history: History, call: PaidCall, labelled: bool, deadline: float, slack: float,
           terminal: tuple[str, ...], until: float) -> dict[str, Any] | None:
    """The violation for one judged job, or None when it ended within slack of the deadline."""
    ended = _ended_at(history, call, terminal)
    if ended is None:
        why = (f"nothing shows the app stopped waiting for its paid call "
               f"({until - call.t_start:.3f}s after it started)")
        return {"why": why, "ended_after_s": None}
    took = ended - call.t_start
    if took <= deadline + slack and (took >= deadline - slack or not labelled):
        return None  # on time; or cut short by something other than the app's own deadline
    when = "late" if took > deadline else "early"
    why = f"the app stopped waiting {took:.3f}s after the call started: {when} for a {deadline:g}s deadline"
    return {"why": why, "ended_after_s": round(took, 6)}


@invariant(NAME, needs=(PAID_CALLS,))
def deadline_honoured(history: History, snapshot: Snapshot | None, deadline: float | None = None,
                      slack: float | None = None, label: str = "timeout") -> Result:
    """Each job whose last paid call went unanswered ended ``deadline`` ± ``slack`` after the call began."""
    if deadline is None:
        return unknown_result(NAME, "no deadline given: pass the configured per-call deadline as an option")
    slack = DEFAULT_SLACK * deadline if slack is None else slack
    terminal = tuple(snapshot.terminal_states) if snapshot is not None else DEFAULT_TERMINAL_STATES
    until = _observed_until(history, snapshot)
    violations: list[dict[str, Any]] = []
    judged = 0
    for job_id, calls in calls_by_job(history).items():
        last = calls[-1]
        reason = _final_reason(history, snapshot, job_id)
        labelled = label.lower() in (reason or "").lower()
        # past deadline + slack: by then the app must have shown that it gave up
        if not (last.elapsed(until) > deadline + slack or labelled):
            continue
        judged += 1
        violation = _judge(history, last, labelled, deadline, slack, terminal, until)
        if violation is not None:
            violations.append({**last.evidence(history.start), "reason": reason, **violation})
    figures = {"deadline": deadline, "slack": slack, "judged": judged}
    if violations:
        first = violations[0]
        message = (f"{len(violations)} of {judged} job(s) did not end at the {deadline:g}s per-call "
                   f"deadline (± {slack:g}s); first: job {first['job_id']}: {first['why']}")
        return invalid_result(NAME, message, violations, **figures)
    if not judged:
        return unknown_result(NAME, f"no paid call outlasted the {deadline:g}s deadline and no job was "
                              f"labelled {label!r}: no deadline was put to the test", **figures)
    return valid_result(NAME, f"{judged} job(s) with an unanswered paid call, each ended at the "
                        f"{deadline:g}s deadline (± {slack:g}s)", **figures)
