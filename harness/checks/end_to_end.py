"""Invariant: the total time a job spends blocked on the provider, per step, stays within its bound.

``deadline_honoured`` judges one call at a time, so a job that waits out
one deadline after another (a retry loop around a hung call, a redelivery
that starts the step over, an attempt cap longer than the code's) passes
it every time while the user waits for ever. This sums, per job and step,
the time the app was blocked on the provider across every call and attempt,
and compares the sum with the declared bound for a step: by default the
``step_blocked`` figure of the app's declared limits (``budget ok limits``
event, see ``harness.limits``: per-call deadline times the attempts the
app allows), or the ``bound`` option; and, where the app declares
``attempt_blocked`` (or ``attempt_bound`` is given), the same within each
attempt: a retry loop inside one attempt waits out several deadlines where
the app allows one.

How long one call blocked the app is measured from the app's side, as a
lower bound: from the call's start to the first of its end in the ledger,
the job's next paid call, the job's next state change or recorded write,
or the end of the evidence. A hung call healed long after the app gave up
therefore counts only until the app moved on. Overlapping calls count once.
A fault injected or a worker killed or gone during a call ends its span as
well (a dead caller is not waiting). A sum above ``bound + slack`` (default
slack: half the bound, at least half a second; the check is for waiting out
several deadlines, not for a late one) is
invalid. Without a bound or without paid calls of a job: ``unknown``.
"""
from __future__ import annotations

from typing import Any, Mapping

from harness.checks.needs import PAID_CALLS, Missing, Need
from harness.checks.paid_calls import PaidCall, calls_by_job
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.evidence import Snapshot
from harness.history import vocabulary as v
from harness.history.event import INVOKE
from harness.history.history import History

NAME = "end_to_end_deadline"
STEP_BLOCKED = "step_blocked"
ATTEMPT_BLOCKED = "attempt_blocked"
DEFAULT_SLACK = 0.5  # of the bound: a loaded machine stretches the work between a timeout and the next sign
MIN_SLACK = 0.5  # seconds: the work between the client giving up and the app's next sign of it


def declared_limits(history: History) -> dict[str, Any]:
    """The app's declared limits (the last ``budget ok limits`` event's data), {} when none."""
    events = history.by_source(v.BUDGET, name=v.LIMITS)
    return dict(events[-1].data) if events else {}


def _bound_declared(history: History, snapshot: Snapshot | None) -> Missing | None:
    if declared_limits(history).get(STEP_BLOCKED) is not None:
        return None
    return Missing("the app declared no bound on the time a step may block on the provider "
                   "(limits.step_blocked; or pass the option bound)")


STEP_BOUND = Need("step_bound", "a declared bound on a step's time blocked on the provider", _bound_declared)


def _cut_short(history: History) -> list[float]:
    """When a process may have died under a call: a fault injected, a worker killed or gone."""
    return sorted([e.t for e in history.by_source(v.FAULT, name=v.INJECT)]
                  + [e.t for e in history.by_source(v.WORKER) if e.name in (v.WORKER_KILLED, v.WORKER_EXITED)])


def _moved_on(history: History, job_id: str, call: PaidCall, until: float) -> float:
    """When the app stopped waiting for ``call``, as far as the evidence shows (a lower bound).

    A fault or a worker's death during the call ends its span too: a killed
    caller is not waiting, and its call's end in the ledger says nothing of it.
    """
    end = call.t_end if call.t_end is not None else until
    end = min([end] + [t for t in _cut_short(history) if t > call.t_start])
    for event in history.by_job(job_id):
        if event.t <= call.t_start or event.t >= end:
            continue
        other_call = event.source == v.PAIDAPI and event.type == INVOKE and event.data.get("call_id") != call.call_id
        if other_call or event.source == v.WRITE or (event.source == v.JOB and event.name == v.STATE):
            return event.t
    return end


def _blocked(history: History, job_id: str, calls: list[PaidCall], until: float) -> float:
    """Seconds the app was blocked on these calls, overlaps counted once."""
    spans = sorted((c.t_start, _moved_on(history, job_id, c, until)) for c in calls)
    total, reach = 0.0, None
    for start, end in spans:
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def _bound_for(step: str, bound: float | Mapping[str, float]) -> float | None:
    if isinstance(bound, Mapping):
        value = bound.get(step, bound.get("*"))
        return None if value is None else float(value)
    return float(bound)


def _over(history: History, job_id: str, step: str, calls: list[PaidCall], limit: float, slack: float | None,
          scope: str) -> dict[str, Any] | None:
    """The violation when ``calls`` blocked the app longer than ``limit`` (plus slack), else None."""
    blocked = _blocked(history, job_id, calls, history.end)
    if blocked <= limit + (max(DEFAULT_SLACK * limit, MIN_SLACK) if slack is None else slack):
        return None
    return {"job_id": job_id, "step": step, "attempt": calls[-1].attempt, "scope": scope, "calls": len(calls),
            "blocked_s": round(blocked, 3), "bound_s": limit,
            "attempts": sorted({c.attempt for c in calls if c.attempt is not None}),
            "at": history.relative(calls[0].t_start)}


def _by_attempt(calls: list[PaidCall]) -> list[list[PaidCall]]:
    grouped: dict[int, list[PaidCall]] = {}
    for call in calls:
        if call.attempt is not None:
            grouped.setdefault(call.attempt, []).append(call)
    return list(grouped.values())


@invariant(NAME, needs=(PAID_CALLS,))
def end_to_end_deadline(history: History, snapshot: Snapshot | None,
                        bound: float | Mapping[str, float] | None = None,
                        attempt_bound: float | Mapping[str, float] | None = None,
                        slack: float | None = None) -> Result:
    """Per job and step (and per attempt), the time blocked on the provider stays within the bound."""
    declared = declared_limits(history)
    bound = declared.get(STEP_BLOCKED) if bound is None else bound
    attempt_bound = declared.get(ATTEMPT_BLOCKED) if attempt_bound is None else attempt_bound
    if bound is None:
        return unknown_result(NAME, "no bound: the app declares no limits.step_blocked and no bound option was given")
    violations, judged = [], 0
    for job_id, calls in calls_by_job(history).items():
        by_step: dict[str, list[PaidCall]] = {}
        for call in calls:
            by_step.setdefault(str(call.step), []).append(call)
        for step, step_calls in by_step.items():
            limit = _bound_for(step, bound)
            if limit is None:
                continue
            judged += 1
            found = _over(history, job_id, step, step_calls, limit, slack, "step")
            per_attempt = None if attempt_bound is None else _bound_for(step, attempt_bound)
            for attempt_calls in (_by_attempt(step_calls) if per_attempt is not None and found is None else []):
                found = found or _over(history, job_id, step, attempt_calls, per_attempt, slack, "attempt")
            if found is not None:
                violations.append(found)
    if violations:
        f = violations[0]
        within = f" in attempt {f['attempt']}" if f["scope"] == "attempt" else ""
        return invalid_result(NAME, f"{len(violations)} step(s) blocked on the provider past their bound; first: "
                              f"job {f['job_id']} step {f['step']!r} blocked {f['blocked_s']:.3f}s{within} over "
                              f"{f['calls']} call(s), bound {f['bound_s']:g}s per {f['scope']}", violations,
                              judged=judged)
    if not judged:
        return unknown_result(NAME, "no step had a bound to judge")
    return valid_result(NAME, f"{judged} step(s) each blocked on the provider within their bound",
                        judged=judged)
