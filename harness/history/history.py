"""``History``: an immutable, time-ordered sequence of events, indexed once.

Checkers look events up by job and by source over and over; the indexes are
built on first use and shared, so every lookup is a dict access and no
checker scans the whole history more than once.
"""
from __future__ import annotations

from functools import cached_property
from typing import Callable, Iterable, Iterator, Sequence, overload

from harness.history.event import Event

__all__ = ["EMPTY", "History"]

EMPTY: tuple[Event, ...] = ()


class History(Sequence[Event]):
    """Events sorted by ``(t, index)``; ``History(events)`` sorts a copy of its input."""

    def __init__(self, events: Iterable[Event] = ()):
        self._events: tuple[Event, ...] = tuple(sorted(events, key=lambda e: (e.t, e.index)))

    @overload
    def __getitem__(self, i: int) -> Event: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Event]: ...
    def __getitem__(self, i: int | slice) -> Event | Sequence[Event]:
        return self._events[i]

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def __repr__(self) -> str:
        return f"History({len(self)} events, {len(self.jobs())} jobs)"

    @cached_property
    def _by_job(self) -> dict[str, tuple[Event, ...]]:
        index: dict[str, list[Event]] = {}
        for event in self._events:
            if event.job_id is not None:
                index.setdefault(event.job_id, []).append(event)
        return {job: tuple(events) for job, events in index.items()}

    @cached_property
    def _by_source(self) -> dict[str, tuple[Event, ...]]:
        index: dict[str, list[Event]] = {}
        for event in self._events:
            index.setdefault(event.source, []).append(event)
        return {source: tuple(events) for source, events in index.items()}

    def by_job(self, job_id: str) -> tuple[Event, ...]:
        """Every event of one job, in order (empty if the job never appears)."""
        return self._by_job.get(job_id, EMPTY)

    def by_source(self, source: str, name: str | None = None, type: str | None = None) -> tuple[Event, ...]:
        """Events from one source, optionally narrowed to one name and/or type."""
        events = self._by_source.get(source, EMPTY)
        if name is None and type is None:
            return events
        return tuple(e for e in events
                     if (name is None or e.name == name) and (type is None or e.type == type))

    def jobs(self) -> list[str]:
        """Job ids in the order they first appear."""
        return list(self._by_job)

    @property
    def start(self) -> float:
        """Monotonic time of the first event (0.0 for an empty history)."""
        return self._events[0].t if self._events else 0.0

    @property
    def end(self) -> float:
        """Monotonic time of the last event (0.0 for an empty history)."""
        return self._events[-1].t if self._events else 0.0

    def first(self, predicate: Callable[[Event], bool] | None = None) -> Event | None:
        """The earliest event matching ``predicate`` (or the earliest of all)."""
        return next((e for e in self._events if predicate is None or predicate(e)), None)

    def last(self, predicate: Callable[[Event], bool] | None = None) -> Event | None:
        """The latest event matching ``predicate`` (or the latest of all)."""
        return next((e for e in reversed(self._events) if predicate is None or predicate(e)), None)

    def filter(self, predicate: Callable[[Event], bool]) -> "History":
        """A new history holding the matching events."""
        return History(e for e in self._events if predicate(e))

    def relative(self, t: float) -> float:
        """Seconds since the first event, rounded to the microsecond."""
        return round(t - self.start, 6)
