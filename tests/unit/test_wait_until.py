"""wait_until: how often it looks, and that it never looks past its deadline (on a simulated clock)."""
from __future__ import annotations

import pytest

from harness import _wait
from harness._wait import BACKOFF, DEFAULT_INTERVAL, LASTING_STATE_INTERVAL, wait_until
from harness.errors import WaitTimeout


class FakeTime:
    """time.monotonic / time.sleep on a clock that moves only when slept on; the pauses taken."""

    def __init__(self):
        self.now = 100.0
        self.pauses: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(_wait, "time", fake)
    return fake


def true_after(clock: FakeTime, seconds: float):
    start = clock.now
    return lambda: clock.now - start >= seconds


def test_a_plain_wait_looks_at_the_same_pace_throughout(clock):
    with pytest.raises(WaitTimeout):
        wait_until(lambda: False, timeout=1.0)
    assert set(round(p, 9) for p in clock.pauses) == {DEFAULT_INTERVAL}
    assert len(clock.pauses) == pytest.approx(1.0 / DEFAULT_INTERVAL, abs=1)


def test_a_lasting_wait_backs_off_to_its_slowest_pace(clock):
    with pytest.raises(WaitTimeout):
        wait_until(lambda: False, timeout=10.0, lasting=True)
    first = clock.pauses[:3]
    assert first == pytest.approx([DEFAULT_INTERVAL, DEFAULT_INTERVAL * BACKOFF, DEFAULT_INTERVAL * BACKOFF ** 2])
    assert max(clock.pauses) == pytest.approx(LASTING_STATE_INTERVAL)
    assert all(b >= a - 1e-12 for a, b in zip(clock.pauses, clock.pauses[1:-1]))  # never faster again
    # ten seconds of waiting: about a tenth of the looks a plain wait takes
    assert len(clock.pauses) < 10.0 / LASTING_STATE_INTERVAL + 10


def test_a_lasting_wait_sees_an_early_state_almost_as_soon(clock):
    """The first pauses are a plain wait's: a job done in 30 ms is seen within a pause of it."""
    wait_until(true_after(clock, 0.03), timeout=5.0, lasting=True)
    assert clock.now - 100.0 < 0.03 + DEFAULT_INTERVAL * BACKOFF ** 3


def test_no_wait_sleeps_past_its_deadline_and_the_last_look_is_at_it(clock):
    start = clock.now
    looks: list[float] = []

    def never() -> bool:
        looks.append(clock.now)
        return False

    with pytest.raises(WaitTimeout):
        wait_until(never, timeout=0.95, lasting=True)
    assert clock.now - start == pytest.approx(0.95)
    assert looks[-1] - start == pytest.approx(0.95)


def test_a_state_reached_at_the_deadline_is_still_seen(clock):
    assert wait_until(true_after(clock, 0.95), timeout=0.95, lasting=True)
