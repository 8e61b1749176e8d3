"""Invariant: two attempts of one job never run at the same time.

Each attempt's activity is the span from its first to its last sign of
life: state changes it wrote (every ``job state`` event carrying that
attempt, except states written while scheduling, ``scheduling_states``),
accepted fenced writes, paid calls it started, and results it received (a
delivered call proves the attempt was alive at ``t_end``; an undelivered
one only proves it was alive at ``t_start``, since the provider may finish
long after a killed worker). Two attempts overlap when the later one shows
life strictly before the earlier one's last sign of life. The
counterexample names both attempts with their spans.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from harness.checks.needs import JOBS
from harness.checks.paid_calls import calls_by_job
from harness.checks.result import Result, invalid_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import OK
from harness.history.history import History
from harness.history.snapshot import Snapshot

NAME = "no_overlapping_attempts"
SCHEDULING_STATES = ("queued", "pending", "retrying", "scheduled", "submitted", "created")

Span = list[float]  # [first, last] sign of life


def _widen(spans: dict[int, Span], attempt: int | None, *times: float) -> None:
    if attempt is None:
        return
    span = spans.setdefault(attempt, [min(times), max(times)])
    span[0], span[1] = min(span[0], *times), max(span[1], *times)


def _spans(history: History, job_id: str, calls: Iterable, scheduling: Sequence[str]) -> dict[int, Span]:
    spans: dict[int, Span] = {}
    for event in history.by_job(job_id):
        if event.source == v.JOB and event.name == v.STATE:
            if event.data.get("state") not in scheduling:
                _widen(spans, event.attempt, event.t)
        elif event.source == v.WRITE and event.type == OK and not event.data.get("refused"):
            _widen(spans, event.attempt, event.t)
    for call in calls:
        if call.delivered and call.t_end is not None:
            _widen(spans, call.attempt, call.t_start, call.t_end)
        else:
            _widen(spans, call.attempt, call.t_start)
    return spans


def _overlap(spans: dict[int, Span]) -> tuple[int, int] | None:
    ordered = sorted(spans.items(), key=lambda item: (item[1][0], item[0]))
    latest_attempt, latest_end = None, float("-inf")
    for attempt, (start, end) in ordered:
        if latest_attempt is not None and start < latest_end:
            return latest_attempt, attempt
        if end > latest_end:
            latest_attempt, latest_end = attempt, end
    return None


@invariant(NAME, needs=(JOBS,))
def no_overlapping_attempts(history: History, snapshot: Snapshot | None,
                            scheduling_states: Sequence[str] = SCHEDULING_STATES) -> Result:
    """No job has two attempts alive at once."""
    calls = calls_by_job(history)
    violations: list[dict[str, Any]] = []
    jobs = history.jobs()
    for job_id in jobs:
        spans = _spans(history, job_id, calls.get(job_id, ()), scheduling_states)
        pair = _overlap(spans) if len(spans) > 1 else None
        if pair is None:
            continue
        a, b = pair
        violations.append({"job_id": job_id, "attempts": [a, b],
                           "spans": {str(n): [history.relative(t) for t in spans[n]] for n in pair},
                           "at": history.relative(spans[b][0])})
    if violations:
        violations.sort(key=lambda item: item["at"])
        first = violations[0]
        a, b = first["attempts"]
        sa, sb = first["spans"][str(a)], first["spans"][str(b)]
        return invalid_result(NAME, f"{len(violations)} job(s) ran attempts at once; first: job "
                              f"{first['job_id']} attempt {a} alive {sa[0]:.3f}-{sa[1]:.3f}s, attempt "
                              f"{b} alive {sb[0]:.3f}-{sb[1]:.3f}s", violations)
    return valid_result(NAME, f"{len(jobs)} job(s), no overlapping attempts", jobs=len(jobs))
