"""``Recorder``: append events to a JSONL file as they happen; ``load`` reads one back.

Each event is written as one line and flushed at once, so a pytest process
that crashes (or is SIGKILLed) leaves a file of complete lines: the evidence
up to the crash. ``load`` tolerates a torn last line, the only damage a kill
in the middle of a write can do.

Usage::

    recorder = Recorder(artifacts / "history.jsonl")
    recorder.record("submit", "invoke", "submit", data={"project": "p", "file": "f"})
    recorder.record("sweep", "ok", "sweep", wall=finished_at)   # dated by the database's clock
    recorder.extend(events_from_ledger(paidapi.ledger()))   # other sources, own times
    history = recorder.events()                             # a History, ordered by t
    recorder.close()
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import IO, Any, Iterable, Mapping

from harness.history.clock import wall_to_monotonic
from harness.history.event import Event
from harness.history.history import History

__all__ = ["Recorder", "load"]


class Recorder:
    """Thread-safe, append-only event log; assigns each event its ``index``."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False):
        """Open (or continue) the log at ``path``; ``fsync`` also survives a machine crash."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fsync = fsync
        self._lock = threading.Lock()
        self._events: list[Event] = []
        if self.path.exists():
            _drop_torn_tail(self.path)
            self._events = list(load(self.path))
        self._next_index = max((e.index for e in self._events), default=-1) + 1
        self._file: IO[str] | None = open(self.path, "a", encoding="utf-8")

    def record(self, source: str, type: str, name: str, job_id: str | None = None,
               attempt: int | None = None, data: Mapping[str, Any] | None = None,
               t: float | None = None, wall: float | None = None) -> Event:
        """Record one event now (or at the given ``t`` / ``wall``) and return it.

        ``wall`` alone (a time the database or another process dated by the wall
        clock) is placed on the monotonic clock with the offset in force then
        (``harness.history.clock``), not the offset of this moment."""
        if t is None:
            t = time.monotonic() if wall is None else wall_to_monotonic()(wall)
        event = Event(index=0, t=t,
                      wall=time.time() if wall is None else wall, source=source, type=type,
                      name=name, job_id=None if job_id is None else str(job_id),
                      attempt=attempt, data=dict(data or {}))
        return self._append([event])[0]

    def extend(self, events: Iterable[Event]) -> list[Event]:
        """Merge events observed elsewhere: they keep their times and get new indexes."""
        return self._append(list(events))

    def _append(self, events: list[Event]) -> list[Event]:
        with self._lock:
            if self._file is None:
                raise ValueError(f"recorder for {self.path} is closed")
            placed = []
            for event in events:
                event = event.with_index(self._next_index)
                self._next_index += 1
                self._file.write(event.to_json() + "\n")
                placed.append(event)
            self._file.flush()
            if self._fsync:
                os.fsync(self._file.fileno())
            self._events.extend(placed)
            return placed

    def events(self) -> History:
        """Everything recorded so far, sorted by ``t`` then ``index``."""
        with self._lock:
            return History(self._events)

    def close(self) -> None:
        """Close the file; later ``record`` calls raise. Safe to call twice."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _drop_torn_tail(path: Path) -> None:
    """Cut a final line without its newline, so new lines do not glue onto it."""
    with open(path, "rb+") as handle:
        data = handle.read()
        if data and not data.endswith(b"\n"):
            handle.truncate(data.rfind(b"\n") + 1)


def load(path: str | os.PathLike[str]) -> History:
    """Read a JSONL history; a torn final line (a write cut by a crash) is skipped."""
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle.read().split("\n") if line.strip()]
    try:  # one decode of the whole file is several times faster than one per line
        raws = json.loads("[" + ",".join(lines) + "]")
    except json.JSONDecodeError:
        raws = _decode_lines(path, lines)
    try:
        return History(Event.from_dict(raw) for raw in raws)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not a history event: {exc}") from exc


def _decode_lines(path: str | os.PathLike[str], lines: list[str]) -> list[dict[str, Any]]:
    raws = []
    for number, line in enumerate(lines, start=1):
        try:
            raws.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):  # the last line, without its newline: torn by a crash
                break
            raise ValueError(f"{path}: line {number} is not JSON: {exc}") from exc
    return raws
