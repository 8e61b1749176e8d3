"""Invariant: every change of a job's row is made by the row's current attempt.

Fencing says an attempt declared dead changes nothing. The job table alone
cannot show it: a late ``done`` written by attempt 1 after attempt 2 took
the job looks like any other ``done``. The harness's state-log trigger
therefore logs, with each change, the attempt that made it
(``writer_attempt``, from the per-transaction setting ``jobquake.attempt``
that the app or the harness's instrumentation sets; see
``harness.history.state_log``). A change whose writer is older than the
row's attempt at that moment is a write by an attempt that was already
replaced: invalid.

A change that raises the row's attempt is a claim: its writer is the new
attempt by definition, whatever the setting says, so it is not judged.
Changes without a writer (the sweeper, the API, an app that sets nothing)
are not judged either. With no change that names its writer at all, the
verdict is ``unknown``.
"""
from __future__ import annotations

from typing import Any

from harness.checks.needs import Missing, Need
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.evidence import Snapshot
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History

NAME = "writes_by_current_attempt"
WRITER = "writer_attempt"  # state-log field: the attempt that made the change


def _state_changes(history: History) -> tuple[Event, ...]:
    return history.by_source(v.JOB, name=v.STATE)


def _writers_named(history: History, snapshot: Snapshot | None) -> Missing | None:
    changes = _state_changes(history)
    if any(e.data.get(WRITER) is not None for e in changes):
        return None
    if not changes:
        return Missing("the job state log holds no change")
    return Missing(f"none of {len(changes)} state change(s) names the attempt that made it "
                   f"(the app or the instrumentation sets jobquake.attempt per transaction)")


WRITERS = Need("writer_attempts", "state changes that name the attempt that made them", _writers_named)


def _order(event: Event) -> tuple[Any, ...]:
    return (event.data.get("log_id") is None, event.data.get("log_id") or 0, event.t)


def _stale_writes(history: History, events: list[Event]) -> tuple[list[dict[str, Any]], int]:
    """The changes of one job made by an attempt older than the row's; and how many were judged."""
    found, judged, previous = [], 0, None
    for event in sorted(events, key=_order):
        row_attempt, writer = event.data.get("attempt"), event.data.get(WRITER)
        claim = row_attempt is not None and (previous is None or row_attempt > previous)
        if writer is not None and row_attempt is not None and not claim:
            judged += 1
            if int(writer) < int(row_attempt):
                found.append({"job_id": event.job_id, "attempt": int(writer), "row_attempt": int(row_attempt),
                              "state": event.data.get("state"), "reason": event.data.get("reason"),
                              "at": history.relative(event.t), "log_id": event.data.get("log_id")})
        if row_attempt is not None:
            previous = row_attempt if previous is None else max(previous, row_attempt)
    return found, judged


@invariant(NAME, needs=(WRITERS,))
def writes_by_current_attempt(history: History, snapshot: Snapshot | None) -> Result:
    """No change of a job's row comes from an attempt older than the row's current one."""
    by_job: dict[str, list[Event]] = {}
    for event in _state_changes(history):
        if event.job_id is not None:
            by_job.setdefault(event.job_id, []).append(event)
    violations, judged = [], 0
    for events in by_job.values():
        found, n = _stale_writes(history, events)
        violations += found
        judged += n
    if violations:
        f = violations[0]
        return invalid_result(NAME, f"{len(violations)} change(s) by an attempt already replaced; first: job "
                              f"{f['job_id']} set state {f['state']!r} from attempt {f['attempt']} while the row "
                              f"was at attempt {f['row_attempt']} ({f['at']:.3f}s)", violations, judged=judged)
    if not judged:
        return unknown_result(NAME, "every change naming its writer was a claim: no later write to judge")
    return valid_result(NAME, f"{judged} change(s) of {len(by_job)} job(s) each made by the row's current attempt",
                        judged=judged, jobs=len(by_job))
