"""Wall times from the database land where they happened on the monotonic clock, across a step of the wall clock."""
from __future__ import annotations

import os

import pytest

from harness.evidence.heartbeats import read_heartbeats
from harness.evidence.state_log import StateLogConfig, read_state_log
from harness.history import clock as clock_module
from harness.history.clock import WallClock

EVER = float("-inf")  # steps_since this: every step seen
BOOT = 1_796_196_000.0  # the wall clock when the monotonic clock read 0


class Machine:
    """A monotonic clock that only runs forward and a wall clock someone can step."""

    def __init__(self):
        self.mono = 100.0
        self.step_total = 0.0
        self.tear = 0.0  # seconds the next wall reading is late by (a preempted sampler)

    def monotonic(self) -> float:
        return self.mono

    def wall(self) -> float:
        self.mono += self.tear
        self.tear = 0.0
        return BOOT + self.mono + self.step_total

    def run(self, seconds: float, clock: WallClock) -> None:
        """Let ``seconds`` pass with the sampler ticking every ``clock.interval``."""
        end = self.mono + seconds
        while self.mono + clock.interval <= end:
            self.mono += clock.interval
            clock.sample()
        self.mono = end


@pytest.fixture
def machine():
    return Machine()


@pytest.fixture
def clock(machine):
    clock = WallClock(interval=0.1, wall=machine.wall, monotonic=machine.monotonic)
    clock.sample()
    return clock


def test_with_no_step_a_wall_time_moves_by_the_one_offset(machine, clock):
    written = machine.wall()
    machine.run(5.0, clock)
    assert clock.to_monotonic(written) == pytest.approx(100.0)
    assert len(clock.steps_since(EVER)) == 0


def test_a_row_written_before_a_step_keeps_its_place_after_it(machine, clock):
    """The failure this prevents: the offset measured at read time moved every earlier row by the step."""
    machine.run(1.0, clock)
    written_at, written = machine.mono, machine.wall()
    machine.run(0.35, clock)
    machine.step_total += 1.7  # the wall clock is caught up
    machine.run(2.0, clock)
    after_at, after = machine.mono, machine.wall()

    assert clock.to_monotonic(written) == pytest.approx(written_at)
    assert clock.to_monotonic(after) == pytest.approx(after_at)
    assert len(clock.steps_since(EVER)) == 1
    naive = written + (machine.monotonic() - machine.wall())
    assert naive == pytest.approx(written_at - 1.7), "the offset of the reading moment is the step off"


def test_the_steps_are_listed_with_their_size_and_moment(machine, clock):
    machine.run(1.0, clock)
    machine.step_total += 1.7
    machine.run(1.0, clock)
    [(at, step)] = clock.steps_since(100.0)
    assert step == pytest.approx(1.7) and 101.0 <= at <= 101.0 + clock.interval
    assert clock.steps_since(at) == []


def test_a_time_in_the_gap_of_a_step_is_placed_within_one_interval(machine, clock):
    machine.run(1.05, clock)
    stepped_at = machine.mono
    machine.step_total += 1.7
    written = machine.wall()  # written right after the step, before the sampler saw it
    machine.run(1.0, clock)
    placed = clock.to_monotonic(written)
    assert stepped_at - clock.interval <= placed <= stepped_at + clock.interval


def test_a_backward_step_places_later_rows_by_the_new_offset(machine, clock):
    machine.run(1.0, clock)
    machine.step_total -= 0.5
    machine.run(1.0, clock)
    at, written = machine.mono, machine.wall()
    machine.run(1.0, clock)
    assert clock.to_monotonic(written) == pytest.approx(at)


def test_a_preempted_sample_is_not_taken_for_a_step(machine, clock):
    machine.run(1.0, clock)
    machine.tear = 0.05  # the sampler lost the CPU between its two readings
    clock.sample()
    machine.run(1.0, clock)
    assert len(clock.steps_since(EVER)) == 0


def test_a_slowly_slewed_clock_stays_within_the_tolerance(machine, clock):
    """NTP slewing moves the offset by microseconds a tick: a handful of segments, each time right."""
    for _ in range(200):
        machine.step_total += 0.0001
        machine.run(0.1, clock)
    at, written = machine.mono, machine.wall()
    assert clock.to_monotonic(written) == pytest.approx(at, abs=0.0011)
    assert len(clock.steps_since(EVER)) <= 20


def test_without_samples_the_offset_of_this_moment_is_used(machine):
    machine.tear = 0.0
    clock = WallClock(interval=0.1, wall=machine.wall, monotonic=machine.monotonic)
    assert clock.to_monotonic(BOOT + 42.0) == pytest.approx(42.0)


def test_start_samples_in_a_daemon_thread_once():
    clock = WallClock(interval=0.01)
    clock.start()
    first = clock._thread
    clock.start()
    assert clock._thread is first and first.daemon and first.is_alive()


def test_a_forked_child_samples_on_its_own(tmp_path):
    """The child gets a fresh lock (the parent's sampler may hold it at the fork) and its own sampler."""
    clock = WallClock(interval=0.01)
    clock.start()
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if it can convert and sample again
        try:
            clock.to_monotonic(0.0)
            clock.start()
            os._exit(0 if clock._thread is not None and clock._thread.is_alive() else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


class Rows:
    """A connection that answers every query with the rows given."""

    def __init__(self, rows):
        self.rows = rows

    def execute(self, query, params):
        return self

    def fetchall(self):
        return self.rows


def test_the_state_log_and_the_heartbeats_are_read_across_a_step(machine, clock, monkeypatch):
    """Read after a step, a beat and a state change keep their order with events dated by the monotonic clock."""
    monkeypatch.setattr(clock_module, "WALL_CLOCK", clock)
    machine.run(0.5, clock)
    beat_at, beat = machine.mono, machine.wall()
    machine.run(0.2, clock)
    changed_at, changed = machine.mono, machine.wall()
    machine.step_total += 1.7
    machine.run(1.0, clock)

    [change] = read_state_log(Rows([(1, "job-1", "running", None, 1, "UPDATE", changed, 7, 1, "jobquake:w:1", changed)]),
                              0, StateLogConfig())
    [logged] = read_heartbeats(Rows([(1, "job-1", 1, beat, beat, "jobquake:w:1")]), StateLogConfig())
    assert change.t == pytest.approx(changed_at) and change.committed_t == pytest.approx(changed_at)
    assert logged.beat_t == pytest.approx(beat_at) and logged.t == pytest.approx(beat_at)
