"""What one status stream has sent, so that it never sends a job backwards.

Status events are news of the database, and news can come late or out of
order: the sweeper publishes "queued" for an attempt it declared dead after
the next attempt's "running" already went out, a stream reads the database
and then receives an event published before that read. Each stream keeps,
per job, the newest state it sent and drops anything older.

A job's states are ordered by its attempt, then by where the state falls in
an attempt's life: ``running`` (claimed), ``queued`` (given back: the next
claim is a new attempt), then a terminal state. Within one attempt nothing
comes back from a terminal state, and a new attempt starts with a claim.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from refapp.attempt import QUEUED, RUNNING, TERMINAL

RANKS = {RUNNING: 1, QUEUED: 2, **dict.fromkeys(TERMINAL, 3)}


def order(event: dict[str, Any]) -> tuple[int, int]:
    """Where ``event`` falls in its job's life: (attempt, rank of its state in that attempt)."""
    return int(event.get("attempt") or 0), RANKS.get(str(event.get("state")), 0)


@dataclass
class SentStates:
    """The newest state sent per job on one stream (``job_id``: the one job it follows, or None: all)."""

    job_id: str | None = None
    sent: dict[str, tuple[tuple[int, int], str]] = field(default_factory=dict)

    def follows(self, event: dict[str, Any]) -> bool:
        """True when ``event`` is about a job this stream shows."""
        return self.job_id is None or event.get("job_id") == self.job_id

    def repeats(self, event: dict[str, Any]) -> bool:
        """True when the job's last sent state is this very state."""
        last = self.sent.get(str(event.get("job_id")))
        return last is not None and last == (order(event), event.get("state"))

    def older(self, event: dict[str, Any]) -> bool:
        """True when the stream already sent a later state of the job than ``event``'s."""
        last = self.sent.get(str(event.get("job_id")))
        return last is not None and order(event) < last[0]

    def started(self, job_id: str) -> bool:
        """True once a state of ``job_id`` was sent."""
        return job_id in self.sent

    def note(self, event: dict[str, Any]) -> None:
        """Remember ``event`` as the last state sent for its job."""
        self.sent[str(event.get("job_id"))] = (order(event), event.get("state"))

    def ends(self, event: dict[str, Any]) -> bool:
        """True when a one-job stream is over: it sent its job's terminal state."""
        return self.job_id is not None and event.get("state") in TERMINAL
