"""Event: JSON round trip and validation; History: ordering and indexes."""
from __future__ import annotations

import pytest

from harness.history import Event, History


def test_event_round_trips_through_json():
    event = Event(3, 12.5, 1_700_000_000.25, "paidapi", "info", "call", "j1", 2,
                  {"billed": True, "key": None, "nested": {"a": [1, 2]}})
    assert Event.from_json(event.to_json()) == event


def test_event_json_defaults_optional_fields():
    event = Event.from_json('{"t": 1.0, "source": "fault", "type": "ok", "name": "inject"}')
    assert (event.index, event.wall, event.job_id, event.attempt, dict(event.data)) == (-1, 0.0, None, None, {})


def test_event_rejects_unknown_types():
    with pytest.raises(ValueError, match="event type"):
        Event(0, 1.0, 1.0, "job", "done", "state")


def test_event_is_frozen():
    event = Event(0, 1.0, 1.0, "job", "ok", "state")
    with pytest.raises(AttributeError):
        event.t = 2.0  # type: ignore[misc]


def make(index: int, t: float, job: str | None = None, source: str = "job") -> Event:
    return Event(index, t, t, source, "ok", "state", job)


def test_history_orders_by_time_then_index_and_indexes_jobs():
    history = History([make(2, 1.0, "b"), make(1, 1.0, "a"), make(0, 0.5, None, "fault"), make(3, 2.0, "a")])
    assert [e.index for e in history] == [0, 1, 2, 3]
    assert history.jobs() == ["a", "b"]
    assert [e.index for e in history.by_job("a")] == [1, 3]
    assert history.by_job("nobody") == ()
    assert [e.index for e in history.by_source("fault")] == [0]
    assert history.first(lambda e: e.job_id == "b").index == 2
    assert history.last(lambda e: e.job_id == "a").index == 3
    assert (history.start, history.end, history.relative(2.0)) == (0.5, 2.0, 1.5)


def test_empty_history():
    history = History()
    assert (len(history), history.jobs(), history.first(), history.start) == (0, [], None, 0.0)
