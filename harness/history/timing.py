"""Which time of a database write a checker reads: when it was made, or when others could see it.

A write has two times. Its *statement time* (``event.t``; the state log's
``clock_timestamp()``) is when the app made it, and orders it against what
the same code did before and after, such as a paid call. Its *commit time*
(``data["committed_t"]``, from ``pg_xact_commit_timestamp``) is when other
transactions could first see it: "was the step already done when the
next attempt asked?" is a question about commit time. In a long
transaction the two can lie seconds apart. Neither is the transaction's
start (``now()``), which dates a write made after a slow call before the
call.

Events without a commit time (not from the database, or a server without
``track_commit_timestamp``) have one time, which serves as both.
"""
from __future__ import annotations

from typing import Callable

from harness.history.clock import wall_to_monotonic
from harness.history.event import Event

__all__ = ["COMMITTED_AT", "COMMITTED_T", "commit_time", "committed_data", "statement_time"]

COMMITTED_T = "committed_t"  # data key: monotonic commit time
COMMITTED_AT = "committed_at"  # data key: wall-clock commit time


def statement_time(event: Event) -> float:
    """When the write was made (monotonic)."""
    return event.t


def commit_time(event: Event) -> float:
    """When the write became visible to other transactions (monotonic); ``event.t`` if unknown."""
    value = event.data.get(COMMITTED_T)
    return float(value) if value is not None else event.t


def committed_data(committed_at: float | None,
                   to_monotonic: Callable[[float], float] | None = None) -> dict[str, float]:
    """The data keys of a commit time read from the database (empty when it was not tracked).

    ``to_monotonic`` places a wall time on the monotonic clock; by default the
    process's (``harness.history.clock``), which uses the offset in force at
    that time."""
    if committed_at is None:
        return {}
    to_monotonic = to_monotonic or wall_to_monotonic()
    return {COMMITTED_AT: committed_at, COMMITTED_T: to_monotonic(committed_at)}
