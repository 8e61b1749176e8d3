"""Invariant: the attempt counts a job's reason quotes agree with the attempts that ran.

A person reads "gave up after 3 attempts" and believes three attempts ran;
a reason built from a setting ("after max_attempts attempts") rather than
from what happened says so even when one attempt ran, and nobody would
notice. Each state change in the job's state log carries both the reason
written and the row's attempt number at that moment (how many attempts
had started), so the two can be compared where the change was made:

* ``N attempts`` in a reason (``after 3 attempts``, ``3 attempts started``)
  must equal the row's attempt number in that same change;
* ``attempt K`` must name an attempt that ran: ``1 <= K <=`` that number.

Changes whose reason quotes no attempt count are not judged; without any
such change, or without an attempt column in the log, the verdict is
``unknown``.
"""
from __future__ import annotations

import re
from typing import Any

from harness.checks.needs import Missing, Need
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.checks.snapshot import Snapshot
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History

NAME = "reasons_match_evidence"
COUNT = re.compile(r"\b(\d+)\s+attempts\b|\b(1)\s+attempt\b", re.IGNORECASE)
ORDINAL = re.compile(r"\battempt\s+#?(\d+)\b", re.IGNORECASE)


def _quoting(history: History) -> list[Event]:
    """State changes whose reason quotes an attempt count or number, with the row's attempt known."""
    return [e for e in history.by_source(v.JOB, name=v.STATE)
            if e.data.get("attempt") is not None and _quotes(e.data.get("reason"))]


def _quotes(reason: Any) -> bool:
    return isinstance(reason, str) and bool(COUNT.search(reason) or ORDINAL.search(reason))


def _reasons_quote(history: History, snapshot: Snapshot | None) -> Missing | None:
    if _quoting(history):
        return None
    return Missing("no state change has a reason that quotes an attempt count, with the row's attempt logged")


QUOTED_ATTEMPTS = Need("quoted_attempts", "state changes whose reason quotes attempts, with the row's attempt",
                       _reasons_quote)


def _wrong(event: Event) -> str | None:
    """Why the reason of this change disagrees with the row's attempt; None when it agrees."""
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


@invariant(NAME, needs=(QUOTED_ATTEMPTS,))
def reasons_match_evidence(history: History, snapshot: Snapshot | None) -> Result:
    """Attempt counts and numbers quoted in reasons match the row's attempts when written."""
    judged = _quoting(history)
    violations = []
    for event in judged:
        why = _wrong(event)
        if why is not None:
            violations.append({"job_id": event.job_id, "attempt": event.data["attempt"],
                               "state": event.data.get("state"), "reason": event.data["reason"],
                               "why": why, "at": history.relative(event.t)})
    if violations:
        f = violations[0]
        return invalid_result(NAME, f"{len(violations)} reason(s) disagree with the attempts that ran; first: "
                              f"job {f['job_id']} ({f['state']}) {f['why']}: {f['reason']!r}", violations,
                              judged=len(judged))
    if not judged:
        return unknown_result(NAME, "no reason quotes an attempt count")
    return valid_result(NAME, f"{len(judged)} reason(s) quoting attempts agree with the attempts that ran",
                        judged=len(judged))
