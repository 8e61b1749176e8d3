"""The nightly's duplicate-spend count, read from the ledger in parts, without services."""
from __future__ import annotations

from harness.nightly.spend import SpendWatch


def call(call_id: int, job: str | None, step: str = "s1", *, state: str = "done", billed: bool = True) -> dict:
    return {"call_id": call_id, "job_id": job, "step": step, "state": state, "billed": billed}


class Ledger:
    """A provider's ledger as the control API answers ``after=``: the calls above an id, oldest first."""

    def __init__(self, calls: list[dict]):
        self.calls = calls
        self.asked: list[int] = []

    def read(self, after: int) -> list[dict]:
        self.asked.append(after)
        return [c for c in self.calls if c["call_id"] > after]


def test_billed_calls_beyond_the_first_per_job_and_step_are_duplicates():
    ledger = Ledger([call(1, "a"), call(2, "a"), call(3, "a", "s2"), call(4, "b", billed=False),
                     call(5, None)])
    assert SpendWatch(ledger.read).update() == 1


def test_a_read_asks_only_for_calls_above_the_oldest_still_open():
    ledger = Ledger([call(1, "a"), call(2, "b", state="in_flight", billed=False), call(3, "c")])
    watch = SpendWatch(ledger.read)
    assert watch.update() == 0
    ledger.calls[1] = call(2, "b")  # the open call ends, billed
    ledger.calls.append(call(4, "b"))  # and its retry is billed too
    assert watch.update() == 1
    assert watch.update() == 1  # calls read twice are counted once
    assert ledger.asked == [0, 1, 4]


def test_a_retry_billed_in_a_later_read_is_a_duplicate():
    ledger = Ledger([call(1, "a")])
    watch = SpendWatch(ledger.read)
    assert watch.update() == 0
    ledger.calls.append(call(2, "a"))
    assert watch.update() == 1
    assert ledger.asked == [0, 1]
