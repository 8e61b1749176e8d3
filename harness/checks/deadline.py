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
  and its ledger cannot tell that nobody received the answer; or
* the provider hung that call (the ledger's ``mode`` ``hang`` /
  ``hang_mid_stream``, or state ``hung``) and the app ended the job before
  the provider let the call go: its client hung up first (the ledger's
  ``client_gone``), or the job's end came before the call's end in the
  ledger. A correct app whose jobs have no reason column gives no other
  evidence: the scenario heals the hang right after the job ends, so the
  call never outlasts the deadline in the ledger. A job that ended only
  after the heal answered the call is not judged this way: the heal, not
  a deadline, may have ended it.

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


HANG_MODES = ("hang", "hang_mid_stream")  # the provider's modes in which it does not answer until healed


def _gave_up_on_a_hang(history: History, call: PaidCall, terminal: tuple[str, ...]) -> bool:
    """The provider hung ``call`` and the app stopped waiting before the provider let it go."""
    if not (call.hung or call.mode in HANG_MODES):
        return False
    ended = _ended_at(history, call, terminal)
    return ended is not None and (call.client_gone or call.t_end is None or ended <= call.t_end)


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
                      slack: float | None = None, label: str = "timeout", slack_ratio: float | None = None) -> Result:
    """Each job whose last paid call went unanswered ended ``deadline`` ± ``slack`` after the call began.

    Without ``deadline``, each call's own: the read timeout its client sent (the ledger's
    ``client_timeout``); a call sent with none has no deadline, which is a violation once it goes
    unanswered. ``slack_ratio`` (default 0.1) sizes the slack from the deadline when ``slack`` is not given.
    """
    ratio = DEFAULT_SLACK if slack_ratio is None else slack_ratio
    terminal = tuple(snapshot.terminal_states) if snapshot is not None else DEFAULT_TERMINAL_STATES
    until = _observed_until(history, snapshot)
    violations: list[dict[str, Any]] = []
    judged = unknown = 0
    for job_id, calls in calls_by_job(history).items():
        last = calls[-1]
        reason = _final_reason(history, snapshot, job_id)
        labelled = label.lower() in (reason or "").lower()
        own = deadline if deadline is not None else _within_task_limit(history, last, _sent(last.client_timeout))
        if own is None:
            unknown += 1
            continue
        if own == NO_TIMEOUT:
            if last.hung or last.t_end is None or last.mode == "hang":  # the provider never answered it
                judged += 1
                violations.append({**last.evidence(history.start), "reason": reason, "ended_after_s": None,
                                   "why": "its call was sent without a timeout: only the provider could end the wait"})
            continue
        allowed = ratio * own if slack is None else slack
        # past deadline + slack: by then the app must have shown that it gave up
        if not (last.elapsed(until) > own + allowed or labelled or _gave_up_on_a_hang(history, last, terminal)):
            continue
        judged += 1
        violation = _judge(history, last, labelled, own, allowed, terminal, until)
        if violation is not None:
            violations.append({**last.evidence(history.start), "reason": reason, "deadline": own, **violation})
    return _verdict(violations, judged, unknown, deadline, slack, ratio, label)


NO_TIMEOUT = "none"


def _within_task_limit(history: History, call: PaidCall, own: float | str | None) -> float | str | None:
    """A call's own deadline, or sooner the soft time limit of the task run that made it (the
    instrumentation's ``invoke task`` event: what ends a job first is the deadline it must keep)."""
    if own is None or own == NO_TIMEOUT:
        return own  # a call sent without a timeout has no deadline of its own, whatever ends its task
    runs = [e for e in history.by_job(str(call.job_id)) if e.source == v.INSTRUMENT and e.name == "task"
            and e.type == "invoke" and e.t <= call.t_start and e.data.get("soft_time_limit")]
    if not runs:
        return own
    remaining = runs[-1].t + float(runs[-1].data["soft_time_limit"]) - call.t_start
    return min(float(own), remaining)


def _sent(value: Any) -> float | str | None:
    """A call's recorded client timeout: seconds, NO_TIMEOUT, or None when the ledger does not know."""
    if value == NO_TIMEOUT:
        return NO_TIMEOUT
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _verdict(violations: list[dict[str, Any]], judged: int, unknown: int, deadline: float | None,
             slack: float | None, ratio: float, label: str) -> Result:
    which = f"the {deadline:g}s per-call deadline" if deadline is not None else "its call's deadline (the " \
        "timeout its client sent)"
    give = f"± {slack:g}s" if slack is not None else f"± {ratio:g} of it"
    figures = {"deadline": deadline, "slack": slack, "slack_ratio": ratio, "judged": judged,
               "no_timeout_known": unknown}
    if violations:
        first = violations[0]
        return invalid_result(NAME, f"{len(violations)} of {judged} job(s) did not end at {which} ({give}); "
                              f"first: job {first['job_id']}: {first['why']}", violations, **figures)
    if not judged:
        why = (f"{unknown} job(s)' calls carried no timeout the ledger could read: pass the configured "
               f"deadline as an option" if unknown else
               f"no paid call outlasted {which}, no job gave up on a call the provider hung and no job was "
               f"labelled {label!r}: no deadline was put to the test")
        return unknown_result(NAME, why, **figures)
    return valid_result(NAME, f"{judged} job(s) with an unanswered paid call, each ended at {which} ({give})",
                        **figures)
