"""Invariant: jobs that timed out say so, and jobs that failed otherwise do not.

Judged per job, from the job's last paid call (by start time), for jobs
whose final state (snapshot row, else the last ``job state`` event) is
terminal and not a success (``success_states``, default ``("done",)``):

* the last call hung (ledger state ``hung``) or ran longer than
  ``deadline`` seconds (to its end, or to the end of the history if it
  never ended): the final ``reason`` must contain ``label`` (default
  ``"timeout"``, case-insensitive; ``exact=True`` asks for equality,
  ``prefix=True`` for a reason that starts with it, as an app whose reasons
  lead with their label wants: "error: gave up (last: timeout: ...)"
  contains the label but is not labelled by it);
* the last call failed with an error status (``fail call``): the reason
  must not contain the label, since the job failed for another reason.

A call that lasted exactly ``deadline`` did not exceed it. A job whose last
call was delivered in time is not judged: its timeout, if any, came from
elsewhere. Jobs without paid calls are not judged.
"""
from __future__ import annotations

from typing import Any, Sequence

from harness.checks.needs import PAID_CALLS
from harness.checks.paid_calls import PaidCall, calls_by_job
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import FAIL
from harness.history.history import History
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, Snapshot

NAME = "timeout_labelled"


def _final(history: History, snapshot: Snapshot | None, job_id: str) -> tuple[str | None, str | None]:
    row = snapshot.job(job_id) if snapshot is not None else None
    if row is not None:
        return row.state, row.reason
    for event in reversed(history.by_job(job_id)):
        if event.source == v.JOB and event.name == v.STATE:
            return event.data.get("state"), event.data.get("reason")
    return None, None


def _exceeded(call: PaidCall, deadline: float | None, end: float) -> bool:
    if call.hung:
        return True
    return deadline is not None and call.elapsed(end) > deadline


def _labelled(reason: str | None, label: str, exact: bool, prefix: bool = False) -> bool:
    text = (reason or "").lower()
    if exact:
        return text == label.lower()
    return text.startswith(label.lower()) if prefix else label.lower() in text


def _judge(call: PaidCall, labelled: bool, deadline: float | None, end: float) -> str | None:
    if _exceeded(call, deadline, end) and not labelled:
        return "its last paid call timed out but the reason does not say timeout"
    if call.outcome == FAIL and labelled:
        return f"its last paid call failed with status {call.status} but the reason says timeout"
    return None


@invariant(NAME, needs=(PAID_CALLS,))
def timeout_labelled(history: History, snapshot: Snapshot | None, deadline: float | None = None,
                     label: str = "timeout", exact: bool = False,
                     success_states: Sequence[str] = ("done",), prefix: bool = False) -> Result:
    """Final reasons match what happened to each job's last paid call."""
    terminal = snapshot.terminal_states if snapshot is not None else DEFAULT_TERMINAL_STATES
    violations: list[dict[str, Any]] = []
    judged = 0
    for job_id, calls in calls_by_job(history).items():
        state, reason = _final(history, snapshot, job_id)
        if state not in terminal or state in success_states:
            continue
        judged += 1
        last = calls[-1]
        why = _judge(last, _labelled(reason, label, exact, prefix), deadline, history.end)
        if why:
            violations.append({**last.evidence(history.start), "final_state": state,
                               "reason": reason, "why": why,
                               "elapsed_s": round(last.elapsed(history.end), 6)})
    if violations:
        first = violations[0]
        return invalid_result(NAME, f"{len(violations)} job(s) mislabelled; first: job "
                              f"{first['job_id']} ended {first['final_state']!r} with reason "
                              f"{first['reason']!r}: {first['why']}", violations, deadline=deadline)
    if not judged:
        return unknown_result(NAME, "no job ended in failure after a paid call: no label to judge",
                              judged=0, deadline=deadline)
    return valid_result(NAME, f"{judged} failed job(s) with paid calls, all labelled correctly",
                        judged=judged, deadline=deadline)
