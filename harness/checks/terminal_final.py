"""Invariant: final means final.

A state shown to a person as final must stay what it was. Two kinds of
evidence, each judged on its own:

* the job state log (``job ok state``): once a job reached a terminal state
  (the snapshot's terminal states, or ``terminal_states=``), it is never
  seen in another state again, terminal or not. A ``done`` job that goes
  back to ``running`` is being worked on twice (a duplicate delivery claimed
  it, a sweeper re-sent it after it finished); a ``needs_human`` or
  ``failed`` job that turns ``done`` was finished by an attempt that should
  have stopped (its write was not fenced by the job's state);
* the status events users were sent (``event ok status``): once users were
  told a terminal state, they are never told another terminal state, nor
  any state of a newer attempt (the job was reopened). A non-terminal event
  of the same or an older attempt after a terminal one is a late delivery
  of an earlier state, which this invariant leaves to the stream checks.

One violation per job and kind of evidence, at the first change; the
counterexample is the earliest. States are ordered by statement time:
writes to one job row are serialised by its row lock, so statement order is
commit order; status events in the order users received them. Without any
state change or status event in the history the verdict is unknown.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from harness.checks.needs import Missing, Need, read_count
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


def _by_job(events: Iterable[Event]) -> dict[str, list[Event]]:
    found: dict[str, list[Event]] = {}
    for event in events:
        if event.job_id is not None and event.data.get("state") is not None:
            found.setdefault(event.job_id, []).append(event)
    return found


def _evidence(history: History, reached: Event, later: Event, told: bool) -> dict[str, Any]:
    return {"job_id": reached.job_id, "terminal_state": reached.data.get("state"),
            "terminal_at": history.relative(reached.t), "terminal_attempt": _attempt(reached),
            "later_state": later.data.get("state"), "later_at": history.relative(later.t),
            "later_attempt": _attempt(later), "reason": later.data.get("reason"),
            **({"told": True} if told else {})}


def _changed(history: History, changes: list[Event], terminal: tuple[str, ...]) -> dict[str, Any] | None:
    """The first change of the job row away from the first terminal state it reached; None if none."""
    reached: Event | None = None
    for event in changes:
        state = event.data.get("state")
        if reached is None:
            reached = event if state in terminal else None
        elif state != reached.data.get("state"):
            return _evidence(history, reached, event, told=False)
    return None


def _retold(history: History, told: list[Event], terminal: tuple[str, ...]) -> dict[str, Any] | None:
    """The first status event after a terminal one that tells another final state, or a newer attempt."""
    reached: Event | None = None
    for event in told:
        state = event.data.get("state")
        if reached is None:
            reached = event if state in terminal else None
            continue
        newer = (_attempt(event) or 0) > (_attempt(reached) or 0)
        if (state in terminal and state != reached.data.get("state")) or (state != reached.data.get("state")
                                                                           and newer):
            return _evidence(history, reached, event, told=True)
    return None


def _describe(found: dict[str, Any]) -> str:
    who = "users were told" if found.get("told") else "was"
    return (f"job {found['job_id']} {who} {found['terminal_state']!r} (attempt {found['terminal_attempt']}) "
            f"at {found['terminal_at']:.3f}s, then {found['later_state']!r} "
            f"(attempt {found['later_attempt']}) at {found['later_at']:.3f}s")


def _states_or_events(history: History, snapshot: Snapshot | None) -> Missing | None:
    if history.by_source(v.JOB, name=v.STATE) or history.by_source(v.EVENT, name=v.STATUS):
        return None
    if read_count(history, v.STATE_LOG_SOURCE) is None:
        return Missing("the job state log was not read and no status event was recorded")
    return Missing("no job state change and no status event was recorded")


FINAL_STATES = Need("final_states", "the job state log or the status events users were sent", _states_or_events)


@invariant(NAME, needs=(FINAL_STATES,))
def terminal_is_final(history: History, snapshot: Snapshot | None,
                      terminal_states: Sequence[str] | None = None) -> Result:
    """A job that reached a terminal state never shows another state, in its row or in what users were told."""
    terminal = tuple(terminal_states or (snapshot.terminal_states if snapshot else DEFAULT_TERMINAL_STATES))
    changes = _by_job(history.by_source(v.JOB, name=v.STATE))
    told = _by_job(history.by_source(v.EVENT, name=v.STATUS))
    if not changes and not told:
        return unknown_result(NAME, "no job state change and no status event in the history: cannot tell "
                              "whether final states stayed final (is the state log installed?)")
    violations = [found for job_id, events in changes.items()
                  if (found := _changed(history, events, terminal)) is not None]
    violations += [found for job_id, events in told.items()
                   if (found := _retold(history, events, terminal)) is not None]
    if violations:
        violations.sort(key=lambda item: item["later_at"])
        return invalid_result(NAME, f"{len(violations)} job(s) left a terminal state; first: "
                              f"{_describe(violations[0])}", violations, terminal_states=list(terminal))
    finished = sum(any(e.data.get("state") in terminal for e in events) for events in changes.values())
    announced = sum(any(e.data.get("state") in terminal for e in events) for events in told.values())
    if not finished and not announced:
        return unknown_result(NAME, f"no job reached a terminal state ({len(changes)} job(s) in the state log, "
                              f"{len(told)} in status events): nothing was final yet", jobs=len(changes))
    told_too = f"; {announced} announced final to users, never otherwise" if told else ""
    return valid_result(NAME, f"{finished} job(s) reached a terminal state and stayed there{told_too}",
                        jobs=len(changes), finished=finished, **({"announced": announced} if told else {}))
