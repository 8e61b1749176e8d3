"""Invariant: the attempt counts a job's reason quotes agree with the attempts that ran.

A person reads "gave up after 3 attempts" and believes three attempts ran;
a reason built from a setting ("after max_attempts attempts") rather than
from what happened says so even when one attempt ran, and nobody would
notice. Each state change in the job's state log carries both the reason
written and the row's attempt number at that moment (how many attempts
had started), so the two can be compared where the change was made:

* ``N attempts`` in a reason (``after 3 attempts``, ``3 attempts started``)
  must equal the row's attempt number in that same change;
* ``attempt K`` must name an attempt that ran: ``1 <= K <=`` that number;
* progress, ``after i of n``, in a job's reason cannot exceed the items the
  evidence shows finished by then: the job's paid steps whose call had
  completed (answered or failed) or whose result was saved before the
  change (the item in flight when a limit fired has neither); a job with
  no paid step in the evidence is not judged on progress;
* progress in a sweep run's reason (``sweep`` events) must equal the rows
  the evidence shows it handled (marked plus failed) of the rows eligible.

Reasons that quote neither are not judged; without any that do, the
verdict is ``unknown``.
"""
from __future__ import annotations

import re
from typing import Any

from harness.checks.needs import Missing, Need
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.evidence import Snapshot
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History

NAME = "reasons_match_evidence"
COUNT = re.compile(r"\b(\d+)\s+attempts\b|\b(1)\s+attempt\b", re.IGNORECASE)
ORDINAL = re.compile(r"\battempt\s+#?(\d+)\b", re.IGNORECASE)
PROGRESS = re.compile(r"\bafter\s+(\d+)\s+of\s+(\d+)\b", re.IGNORECASE)


def _quoting(history: History) -> list[Event]:
    """State changes quoting attempts (row's attempt known) or progress; sweep runs quoting progress."""
    changes = [e for e in history.by_source(v.JOB, name=v.STATE)
               if (e.data.get("attempt") is not None and _quotes(e.data.get("reason")))
               or (_progress(e.data.get("reason")) is not None and _has_paid_steps(history, e.job_id))]
    return changes + [e for e in history.by_source(v.SWEEP, name=v.SWEEP)
                      if _progress(e.data.get("reason")) is not None]


def _progress(reason: Any) -> tuple[int, int] | None:
    match = PROGRESS.search(reason) if isinstance(reason, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def _has_paid_steps(history: History, job_id: Any) -> bool:
    return job_id is not None and any(e.source in (v.PAIDAPI, v.WRITE) for e in history.by_job(str(job_id)))


def _finished_by(history: History, job_id: str, t: float) -> set[str]:
    """The job's paid steps whose call completed, or whose result was saved, before ``t``."""
    steps = set()
    for event in history.by_job(job_id):
        if event.t > t:
            continue
        completed = event.source == v.PAIDAPI and event.name == v.CALL and event.type in ("ok", "fail") \
            and not event.data.get("open")
        saved = event.source == v.WRITE and event.name == v.STEP_SAVED
        if (completed or saved) and event.data.get("step") is not None:
            steps.add(str(event.data["step"]))
    return steps


def _wrong_progress(history: History, event: Event) -> str | None:
    said, total = _progress(event.data.get("reason"))  # type: ignore[misc]
    if event.source == v.SWEEP:
        handled = len(event.data.get("processed") or []) + len(event.data.get("failed") or [])
        eligible = len(event.data.get("eligible") or []) + len(event.data.get("unreached") or [])
        if (said, total) != (handled, eligible):
            return f"says {said} of {total} rows but the evidence shows {handled} of {eligible} handled"
        return None
    if not _has_paid_steps(history, event.job_id):
        return None  # items without paid steps (e.g. rows of an import): nothing to count them by
    finished = _finished_by(history, str(event.job_id), event.t)
    if said > len(finished):
        return f"says {said} of {total} finished but only {len(finished)} step(s) had completed by then"
    return None


def _quotes(reason: Any) -> bool:
    return isinstance(reason, str) and bool(COUNT.search(reason) or ORDINAL.search(reason))


def _reasons_quote(history: History, snapshot: Snapshot | None) -> Missing | None:
    if _quoting(history):
        return None
    return Missing("no reason quotes an attempt count or progress (with the row's attempt logged)")


QUOTED_ATTEMPTS = Need("quoted_attempts", "reasons that quote attempts or progress",
                       _reasons_quote)


def _wrong(history: History, event: Event) -> str | None:
    """Why the reason of this change disagrees with the evidence; None when it agrees."""
    if _progress(event.data.get("reason")) is not None:
        why = _wrong_progress(history, event)
        if why is not None:
            return why
    if event.source != v.JOB or event.data.get("attempt") is None:
        return None
    reason, ran = str(event.data["reason"]), int(event.data["attempt"])
    for match in COUNT.finditer(reason):
        said = int(match.group(1) or match.group(2))
        if said != ran:
            return f"says {said} attempt(s) but {ran} had started"
    for match in ORDINAL.finditer(reason):
        named = int(match.group(1))
        if not 1 <= named <= ran:
            return f"names attempt {named} but {ran} had started"
    return None


def _whose(violation: dict[str, Any]) -> str:
    """Who wrote the reason: a job, or a sweep run (which has no job)."""
    if "run_id" in violation:
        return f"sweep run {violation['run_id']}"
    return f"job {violation['job_id']}"


@invariant(NAME, needs=(QUOTED_ATTEMPTS,))
def reasons_match_evidence(history: History, snapshot: Snapshot | None) -> Result:
    """Attempt counts, attempt numbers and progress quoted in reasons match the evidence."""
    judged = _quoting(history)
    violations = []
    for event in judged:
        why = _wrong(history, event)
        if why is not None:
            violations.append({"job_id": event.job_id, "attempt": event.data.get("attempt"),
                               "state": event.data.get("state"), "reason": event.data["reason"],
                               "why": why, "at": history.relative(event.t),
                               **({"run_id": event.data.get("run_id")} if event.source == v.SWEEP else {})})
    if violations:
        f = violations[0]
        return invalid_result(NAME, f"{len(violations)} reason(s) disagree with the evidence; first: "
                              f"{_whose(f)} ({f['state']}) {f['why']}: {f['reason']!r}", violations,
                              judged=len(judged))
    if not judged:
        return unknown_result(NAME, "no reason quotes an attempt count or progress")
    return valid_result(NAME, f"{len(judged)} reason(s) quoting attempts or progress agree with the evidence",
                        judged=len(judged))
