"""One observed fact of a run: the ``Event`` record and its JSON form.

Events follow Jepsen's operation model: an ``invoke`` says something was
attempted, and a completion says how it ended: ``ok`` (it happened),
``fail`` (it certainly did not happen) or ``info`` (nobody knows: the answer
was lost, the client went away). Facts observed after the fact (a state
change read from the database, a failpoint trigger) are recorded as ``ok``
without an ``invoke``.

``t`` is ``time.monotonic()``: CLOCK_MONOTONIC is system-wide on Linux, so
events recorded by several processes on one machine order together. ``wall``
is ``time.time()``, kept for people and for matching database timestamps.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["COMPLETIONS", "EVENT_TYPES", "Event", "FAIL", "INFO", "INVOKE", "OK", "UNINDEXED"]

INVOKE = "invoke"
OK = "ok"
FAIL = "fail"
INFO = "info"
EVENT_TYPES = (INVOKE, OK, FAIL, INFO)
COMPLETIONS = (OK, FAIL, INFO)

UNINDEXED = -1  # index of an event not yet placed in a history by a Recorder
# one encoder for every line: ``json.dumps`` with options builds a new one per call, a cost a long
# run's hundreds of thousands of events feel
_ENCODER = json.JSONEncoder(separators=(",", ":"), default=str)


@dataclass(frozen=True, slots=True)
class Event:
    """An immutable history entry; ``data`` holds the source-specific details."""

    index: int
    t: float
    wall: float
    source: str
    type: str
    name: str
    job_id: str | None = None
    attempt: int | None = None
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)  # read-only by convention

    def __post_init__(self) -> None:
        if self.type not in EVENT_TYPES:
            raise ValueError(f"event type must be one of {EVENT_TYPES}, got {self.type!r}")

    def with_index(self, index: int) -> "Event":
        """The same event placed at ``index`` in a history."""
        # the constructor, not ``dataclasses.replace``: several times cheaper, and every field is kept
        return Event(index, self.t, self.wall, self.source, self.type, self.name, self.job_id, self.attempt,
                     self.data)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict with the keys of the JSON form, in a stable order."""
        return {
            "index": self.index,
            "t": self.t,
            "wall": self.wall,
            "source": self.source,
            "type": self.type,
            "name": self.name,
            "job_id": self.job_id,
            "attempt": self.attempt,
            "data": dict(self.data),
        }

    def to_json(self) -> str:
        """One JSON line (no newline); non-JSON values in ``data`` become strings."""
        return _ENCODER.encode(self.to_dict())

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> "Event":
        """Build an event from its dict form; missing optional keys take their defaults."""
        job_id = raw.get("job_id")
        attempt = raw.get("attempt")
        return cls(
            index=int(raw.get("index", UNINDEXED)),
            t=float(raw["t"]),
            wall=float(raw.get("wall", 0.0)),
            source=str(raw["source"]),
            type=str(raw["type"]),
            name=str(raw["name"]),
            job_id=None if job_id is None else str(job_id),
            attempt=None if attempt is None else int(attempt),
            data=dict(raw.get("data") or {}),
        )

    @classmethod
    def from_json(cls, line: str) -> "Event":
        """Parse one JSON line written by ``to_json``."""
        return cls.from_dict(json.loads(line))
