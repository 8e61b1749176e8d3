"""Invariant: no paid call for a step that was already done.

A job's paid step is *done* once its result is committed: from then on,
"already done?" must answer yes, and the app must reuse the saved result
instead of calling the provider again. A call the provider replays (same
idempotency key) costs nothing, but the app still asked for work it had,
and with a provider that cannot deduplicate it would have paid twice.

Evidence, besides the paid-API ledger:

* ``write ok step_saved`` (source ``write``, name ``step_saved``): the
  app committed the result of one step; ``job_id`` and ``attempt`` as
  usual, ``data = {"step", "table", "call_id", "refused": False}`` and,
  where known, ``committed_t`` (``harness.history.timing``). An app's
  scenario records these from its own results table (for refapp:
  ``scenarios/idempotency_support.py`` reads ``step_results``).

Which time: the step counts as done from its **commit time**, when another
attempt asking "already done?" could first see it. The transaction's
start (``now()``) would date a result saved after a slow call in one long
transaction before that very call, and the check would claim the
impossible order "paid for after it was saved". Without a commit time the
event's own time is used.

A paid call (any outcome: billed, replayed, failed or still open) for the
same job and step that *started* more than ``slack`` seconds after the
step was saved is a violation; the call that produced the result started
before it was saved. When several saves of one step are recorded, the
earliest counts. Paid calls with no recorded save for their step are not
judged; if there are paid calls but no ``step_saved`` event at all, the
evidence is missing and the verdict is ``unknown``.

The counterexample is the earliest violation: the save, then the call.
"""
from __future__ import annotations

from typing import Any

from harness.checks.needs import PAID_CALLS
from harness.checks.paid_calls import PaidCall, paid_calls
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import OK, Event
from harness.history.history import History
from harness.history.snapshot import Snapshot
from harness.history.timing import commit_time

NAME = "no_paid_call_for_done_step"
STEP_SAVED = v.STEP_SAVED  # event name, source ``write``: a step's result was committed


def saved_steps(history: History) -> dict[tuple[str, str], Event]:
    """The earliest ``write ok step_saved`` event per (job, step)."""
    saved: dict[tuple[str, str], Event] = {}
    for event in history.by_source(v.WRITE, name=STEP_SAVED, type=OK):
        step = event.data.get("step")
        if event.job_id is None or step is None:
            continue
        key = (event.job_id, str(step))
        if key not in saved or commit_time(event) < commit_time(saved[key]):
            saved[key] = event
    return saved


def _saved_evidence(history: History, event: Event) -> dict[str, Any]:
    return {"job_id": event.job_id, "attempt": event.attempt, "step": event.data.get("step"),
            "saved_at": history.relative(commit_time(event)), "call_id": event.data.get("call_id"),
            "what": "step result committed"}


def _describe(saved: dict[str, Any], call: dict[str, Any]) -> str:
    outcome = "billed" if call["billed"] else (call["state"] or "no outcome")
    return (f"job {saved['job_id']} step {saved['step']!r} was saved by attempt {saved['attempt']} "
            f"at {saved['saved_at']:.3f}s, then attempt {call['attempt']} called the provider for it "
            f"again at {call['at']:.3f}s ({call['call_id']}, {outcome})")


def _late_calls(calls: tuple[PaidCall, ...], saved: dict[tuple[str, str], Event],
                slack: float) -> list[tuple[Event, PaidCall]]:
    late = []
    for call in calls:
        if call.job_id is None or call.step is None:
            continue
        save = saved.get((call.job_id, call.step))
        if save is not None and call.t_start > commit_time(save) + slack:
            late.append((save, call))
    return late


@invariant(NAME, needs=(PAID_CALLS,))
def no_paid_call_for_done_step(history: History, snapshot: Snapshot | None,
                               slack: float = 0.0) -> Result:
    """No paid call for a (job, step) started more than ``slack`` s after that step was saved."""
    calls = paid_calls(history)
    saved = saved_steps(history)
    if not saved:
        return unknown_result(NAME, f"{len(calls)} paid call(s) but no '{STEP_SAVED}' event: "
                              f"cannot tell when steps were done (record them from the results table)")
    late = _late_calls(calls, saved, slack)
    if not late:
        return valid_result(NAME, f"{len(calls)} paid call(s), none for a step already saved "
                            f"({len(saved)} step(s) saved)", calls=len(calls), saved_steps=len(saved))
    violations = []
    for save, call in late:
        evidence = call.evidence(history.start)
        violations.append({"job_id": call.job_id, "step": call.step, "attempt": call.attempt,
                           "call_id": call.call_id, "saved_at": history.relative(commit_time(save)),
                           "called_at": evidence["at"], "saved": _saved_evidence(history, save),
                           "call": evidence})
    first = violations[0]
    message = (f"{len(violations)} paid call(s) for a step already done; first: "
               f"{_describe(first['saved'], first['call'])}")
    return invalid_result(NAME, message, violations, counterexample=[first["saved"], first["call"]])
