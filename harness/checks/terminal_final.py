"""Invariant: a terminal state is final.

Reads the job state log (``job ok state`` events). Once a job reached a
terminal state (default: the snapshot's terminal states, or
``terminal_states=``), it must never be seen in a non-terminal state again:
a ``done`` job that goes back to ``running`` is being worked on twice (a
duplicate delivery claimed it, a retry ignored the result), and the user
was already told it had finished. One violation per job, at the first
reopening; the counterexample is the earliest one. Without any state
change in the history the verdict is unknown (the state log is missing).
States are ordered by statement time: writes to one job row are
serialised by its row lock, so statement order is commit order.
"""
from __future__ import annotations

from typing import Any, Sequence

from harness.checks.needs import STATE_CHANGES
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, Snapshot

NAME = "terminal_is_final"


def _attempt(event: Event) -> int | None:
    attempt = event.attempt if event.attempt is not None else event.data.get("attempt")
    return None if attempt is None else int(attempt)


def _reopening(history: History, job_id: str, changes: list[Event],
               terminal: tuple[str, ...]) -> dict[str, Any] | None:
    """The first non-terminal state after a terminal one in ``changes``, as evidence; None if none."""
    reached: Event | None = None
    for event in changes:
        state = event.data.get("state")
        if state in terminal:
            reached = reached or event
        elif reached is not None:
            return {"job_id": job_id,
                    "terminal_state": reached.data.get("state"),
                    "terminal_at": history.relative(reached.t), "terminal_attempt": _attempt(reached),
                    "later_state": state,
                    "later_at": history.relative(event.t), "later_attempt": _attempt(event),
                    "reason": event.data.get("reason")}
    return None


def _describe(found: dict[str, Any]) -> str:
    return (f"job {found['job_id']} was {found['terminal_state']!r} (attempt {found['terminal_attempt']}) "
            f"at {found['terminal_at']:.3f}s, then {found['later_state']!r} "
            f"(attempt {found['later_attempt']}) at {found['later_at']:.3f}s")


@invariant(NAME, needs=(STATE_CHANGES,))
def terminal_is_final(history: History, snapshot: Snapshot | None,
                      terminal_states: Sequence[str] | None = None) -> Result:
    """No job leaves a terminal state for a non-terminal one."""
    terminal = tuple(terminal_states or (snapshot.terminal_states if snapshot else DEFAULT_TERMINAL_STATES))
    changes: dict[str, list[Event]] = {}
    for event in history.by_source(v.JOB, name=v.STATE):
        if event.job_id is not None and event.data.get("state") is not None:
            changes.setdefault(event.job_id, []).append(event)
    if not changes:
        return unknown_result(NAME, "no job state change in the history: cannot tell whether "
                              "terminal states stayed final (is the state log installed?)")
    violations = [found for job_id, events in changes.items()
                  if (found := _reopening(history, job_id, events, terminal)) is not None]
    if violations:
        violations.sort(key=lambda item: item["later_at"])
        return invalid_result(NAME, f"{len(violations)} job(s) left a terminal state; first: "
                              f"{_describe(violations[0])}", violations, terminal_states=list(terminal))
    finished = sum(any(e.data.get("state") in terminal for e in events) for events in changes.values())
    return valid_result(NAME, f"{finished} job(s) reached a terminal state and stayed there",
                        jobs=len(changes), finished=finished)
