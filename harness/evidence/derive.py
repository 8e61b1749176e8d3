"""Facts the harness derives from the job state log rather than asks the app for.

``attempt_deaths``: with a fencing token (the job row's attempt number), an
attempt is declared dead the moment the job leaves it behind: another
attempt claims the job (the number goes up), or the job goes back to the
state it started in (re-queued by a sweeper, a visibility cap, a retry).
From then on the dead attempt must have no effect; the checker
``no_effect_from_dead_attempt`` holds the app to that
(``harness.evidence.events.events_from_attempt_deaths`` makes them events).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from harness.evidence.state_log import StateChange


@dataclass(frozen=True)
class AttemptDeath:
    """Attempt ``attempt`` of ``job_id`` was left behind by ``change`` (``by`` says how)."""

    job_id: str
    attempt: int
    by: str
    change: StateChange  # the write that declared it: the fence is up for others once it commits


def attempt_deaths(changes: Iterable[StateChange], terminal_states: Iterable[str]) -> list[AttemptDeath]:
    """One death per (job, attempt) left behind, at the change that left it, in time order."""
    terminal = set(terminal_states)
    initial: dict[str, str] = {}
    live: dict[str, int] = {}  # job -> attempt currently running
    deaths: list[AttemptDeath] = []
    for change in sorted((c for c in changes if not c.deleted), key=lambda c: c.t):
        job, state, attempt = change.job_id, change.state, change.attempt
        if job is None or state is None:
            continue
        initial.setdefault(job, state)
        current = live.get(job)
        left_behind = current is not None and (
            (attempt is not None and attempt != current) or state == initial[job])
        if left_behind:
            reason = "requeued" if state == initial[job] else f"attempt {attempt} claimed the job"
            deaths.append(AttemptDeath(job, current, reason, change))
            live.pop(job)
        if state in terminal or state == initial[job]:
            live.pop(job, None)
        elif attempt is not None:
            live[job] = attempt
    return deaths
