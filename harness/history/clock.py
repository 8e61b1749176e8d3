"""Wall-clock times from other processes, placed on this machine's monotonic clock.

The database dates a write with its wall clock (``clock_timestamp()``, commit
timestamps), a Celery worker dates its log lines with its own; the harness,
the paid API and the failpoints date events with ``time.monotonic()``. To
put them on one timeline a wall time ``w`` becomes ``w + offset``, where
``offset = monotonic - wall``.

That offset is not a constant. The monotonic clock only runs forward; the
wall clock is stepped: by NTP, by a virtual machine restored from a
snapshot that catches its clock up, by an operator's ``date -s``. An offset
measured when the evidence is read misplaces everything written before a
step by the size of the step: a 1.7 s step once put a worker's paid call
after its job was done, and a killed attempt looked alive after it had
lost its job.

So ``WallClock`` samples the offset while the process runs (``start()``: a
daemon thread, every ``interval`` seconds; it keeps only where the offset
moved, so a long run holds a few samples), and ``to_monotonic(w)`` uses the
offset that was in force at wall time ``w`` (``converter()`` gives one
function for a batch of rows). A wall time that falls in the
gap a forward step left between two samples is placed right after the
last sample before the step, never past the first one after it, so an
event is misplaced by at most one interval. Without samples (``start()``
never called) it measures the offset when asked, which is right as long as
the clock was not stepped in between.

``WALL_CLOCK`` is the process's clock; the run and the nightly start it.
"""
from __future__ import annotations

import bisect
import os
import threading
import time
from dataclasses import dataclass
from typing import Callable

__all__ = ["MOVED", "TORN", "Segment", "WallClock", "WALL_CLOCK", "wall_to_monotonic"]

MOVED = 0.001  # seconds: an offset that changed by more is a new segment (slewing moves it far less per sample)
TORN = 0.001  # seconds: a sample whose two monotonic readings lie further apart was preempted; skipped


@dataclass
class Segment:
    """Samples that saw one offset: the first and last of them, as (wall, monotonic)."""

    first_wall: float
    first_mono: float
    last_wall: float
    last_mono: float

    @property
    def offset(self) -> float:
        return self.last_mono - self.last_wall


class WallClock:
    """The offset ``monotonic - wall`` over the life of the process, sampled so a step of the wall clock shows."""

    def __init__(self, interval: float = 0.1, wall: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic):
        self.interval = interval
        self._wall, self._monotonic = wall, monotonic
        self._segments: list[Segment] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # a child forked while the sampler held the lock would wait on it forever, and has no sampler
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self._lock = threading.Lock()
        self._thread = None

    def start(self) -> None:
        """Sample in a daemon thread from now on (again: nothing)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name="jobquake-wall-clock", daemon=True)
        self.sample()
        self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(self.interval)
            self.sample()

    def sample(self) -> None:
        """Read both clocks once and keep the reading where the offset moved."""
        before = self._monotonic()
        wall = self._wall()
        after = self._monotonic()
        if after - before > TORN:
            return
        mono = (before + after) / 2
        with self._lock:
            last = self._segments[-1] if self._segments else None
            if last is not None and abs((mono - wall) - last.offset) <= MOVED:
                last.last_wall, last.last_mono = wall, mono
            else:
                self._segments.append(Segment(wall, mono, wall, mono))

    def steps_since(self, monotonic: float) -> list[tuple[float, float]]:
        """The steps seen after monotonic time ``monotonic``: (when on the monotonic clock, by how many seconds)."""
        with self._lock:
            segments = list(self._segments)
        return [(after.first_mono, round((after.first_wall - after.first_mono) - (before.last_wall - before.last_mono), 6))
                for before, after in zip(segments, segments[1:]) if after.first_mono > monotonic]

    def converter(self) -> Callable[[float], float]:
        """A function placing wall times of this run so far on the monotonic clock (one per batch read)."""
        self.sample()  # covers what happened since the last tick
        with self._lock:
            segments = [Segment(s.first_wall, s.first_mono, s.last_wall, s.last_mono) for s in self._segments]
        if not segments:  # every sample torn: the offset of this moment
            offset = self._monotonic() - self._wall()
            return lambda wall: wall + offset
        starts = [s.first_wall for s in segments]

        def to_monotonic(wall: float) -> float:
            i = bisect.bisect_right(starts, wall) - 1
            if i < 0:
                return wall + segments[0].offset
            segment = segments[i]
            if wall <= segment.last_wall or i + 1 == len(segments):
                return wall + segment.offset
            # between this segment's last sample and the next one's first: the step came somewhere in here
            return min(wall + segment.offset, segments[i + 1].first_mono)

        return to_monotonic

    def to_monotonic(self, wall: float) -> float:
        """Wall time ``wall`` on the monotonic clock, with the offset in force at that time."""
        return self.converter()(wall)


WALL_CLOCK = WallClock()


def wall_to_monotonic() -> Callable[[float], float]:
    """``WALL_CLOCK.converter()``: places wall times of this process's life on the monotonic clock."""
    return WALL_CLOCK.converter()
