"""Invariant: an attempt declared dead has no further effect.

Once ``job attempt_dead`` says attempt N of a job is dead (the sweeper, the
visibility timeout or the fence decided so), attempt N must not get a write
accepted (``ok write``, ``refused`` false) nor start a paid call
(``invoke call``) strictly after that moment. The moment of death is the
commit time of the write that declared it (before the commit no one else
could see the fence); the effect is dated by its statement time (when the
dead attempt acted). A write the fence refused
(``fail write``) is the protection working, not a violation. The
counterexample is the earliest effect after death.
"""
from __future__ import annotations

from typing import Any

from harness.checks.needs import JOBS
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import INVOKE, OK, Event
from harness.history.history import History
from harness.history.snapshot import Snapshot
from harness.history.timing import commit_time, statement_time

NAME = "no_effect_from_dead_attempt"


def _deaths(history: History) -> dict[tuple[str, int], Event]:
    """The first death declaration of each (job, attempt)."""
    deaths: dict[tuple[str, int], Event] = {}
    for event in history.by_source(v.JOB, name=v.ATTEMPT_DEAD):
        attempt = event.attempt if event.attempt is not None else event.data.get("attempt")
        if event.job_id is not None and attempt is not None:
            deaths.setdefault((event.job_id, int(attempt)), event)
    return deaths


def _is_effect(event: Event) -> bool:
    if event.source == v.WRITE:
        return event.type == OK and not event.data.get("refused")
    return event.source == v.PAIDAPI and event.type == INVOKE


def _effect_attempt(event: Event) -> int | None:
    attempt = event.attempt if event.attempt is not None else event.data.get("attempt")
    return None if attempt is None else int(attempt)


@invariant(NAME, needs=(JOBS,))
def no_effect_from_dead_attempt(history: History, snapshot: Snapshot | None) -> Result:
    """No accepted write or new paid call from an attempt after it was declared dead."""
    deaths = _deaths(history)
    violations: list[dict[str, Any]] = []
    for job_id in dict.fromkeys(job for job, _ in deaths):
        for event in history.by_job(job_id):
            attempt = _effect_attempt(event)
            death = deaths.get((job_id, attempt)) if attempt is not None else None
            if death is None or statement_time(event) <= commit_time(death) or not _is_effect(event):
                continue
            violations.append({"job_id": job_id, "attempt": attempt,
                               "effect": f"{event.source} {event.type} {event.name}",
                               "call_id": event.data.get("call_id"),
                               "table": event.data.get("table"),
                               "at": history.relative(event.t),
                               "dead_at": history.relative(death.t),
                               "declared_by": death.data.get("by")})
    if violations:
        violations.sort(key=lambda item: item["at"])
        first = violations[0]
        return invalid_result(NAME, f"{len(violations)} effect(s) from dead attempts; first: job "
                              f"{first['job_id']} attempt {first['attempt']} ({first['effect']}) at "
                              f"{first['at']:.3f}s, declared dead at {first['dead_at']:.3f}s by "
                              f"{first['declared_by']}", violations)
    if not deaths:
        return unknown_result(NAME, "no attempt was declared dead: no dead attempt to watch", dead_attempts=0)
    return valid_result(NAME, f"{len(deaths)} dead attempt(s), none had an effect afterwards",
                        dead_attempts=len(deaths))
