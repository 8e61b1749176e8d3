"""Facts the harness derives from the job state log rather than asks the app for.

``attempt_deaths``: with a fencing token (the job row's attempt number), an
attempt is declared dead the moment the job leaves it behind: another
attempt claims the job (the number goes up), or the job goes back to the
state it started in (re-queued by a sweeper, a visibility cap, a retry).
From then on the dead attempt must have no effect; the checker
``no_effect_from_dead_attempt`` holds the app to that.
"""
from __future__ import annotations

from typing import Iterable

from harness.history import vocabulary as v
from harness.history.event import OK, UNINDEXED, Event
from harness.history.timing import COMMITTED_AT, COMMITTED_T


def attempt_deaths(events: Iterable[Event], terminal_states: Iterable[str]) -> list[Event]:
    """``job ok attempt_dead`` events, one per (job, attempt) left behind, at the moment it was."""
    terminal = set(terminal_states)
    initial: dict[str, str] = {}
    live: dict[str, int] = {}  # job -> attempt currently running
    deaths: list[Event] = []
    for event in sorted((e for e in events if e.source == v.JOB and e.name == v.STATE), key=lambda e: e.t):
        job, state, attempt = event.job_id, event.data.get("state"), event.data.get("attempt")
        if job is None or state is None:
            continue
        initial.setdefault(job, state)
        current = live.get(job)
        left_behind = current is not None and (
            (attempt is not None and attempt != current) or state == initial[job])
        if left_behind:
            reason = "requeued" if state == initial[job] else f"attempt {attempt} claimed the job"
            # the fence is up for others once the declaring write commits: keep its commit time
            committed = {k: event.data[k] for k in (COMMITTED_T, COMMITTED_AT) if k in event.data}
            deaths.append(Event(UNINDEXED, event.t, event.wall, v.JOB, OK, v.ATTEMPT_DEAD, job, current,
                                {"attempt": current, "by": reason, **committed}))
            live.pop(job)
        if state in terminal or state == initial[job]:
            live.pop(job, None)
        elif attempt is not None:
            live[job] = attempt
    return deaths
