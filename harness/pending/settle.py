"""Wait until nothing can still cause work, or say what is still pending, where and since when.

A settler polls its readers (one per place work can wait: job table, app
queries, broker, SQS, paid API). Quiet means every reader found nothing to
wait for on two polls in a row: a Redis consumer takes a message off its
list and writes it to ``unacked`` in two steps, so one read can fall
between them and see neither. A reader that fails counts as pending (an
unreadable broker is not an empty one).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Mapping

from harness._wait import wait_until
from harness.errors import SettleTimeout, WaitTimeout  # noqa: F401 - SettleTimeout re-exported
from harness.pending.item import PendingWork, blocking, describe_all

__all__ = ["INTERVAL", "QUIET_READS", "Reader", "SettleOutcome", "Settler"]

Reader = Callable[[], list[PendingWork]]
QUIET_READS = 2  # consecutive quiet polls that make "settled"
INTERVAL = 0.02


@dataclass
class SettleOutcome:
    """How a settle ended: settled or not, and what was still there (parked work included)."""

    settled: bool
    pending: list[PendingWork] = field(default_factory=list)
    waited: float = 0.0
    timeout: float = 0.0

    def describe(self) -> str:
        head = (f"settled after {self.waited:.2f} s" if self.settled else
                f"still pending after {self.timeout:.1f} s (settle_timeout)")
        return f"{head}:\n{describe_all(self.pending)}" if self.pending else head


class Settler:
    """Polls readers until nothing blocks; remembers when each undated item was first seen."""

    def __init__(self, readers: Mapping[str, Reader], clock: Callable[[], float] = time.time):
        self.readers = dict(readers)
        self.clock = clock
        self._first_seen: dict[tuple[str, str, str], float] = {}
        self._last: list[PendingWork] = []

    def _read(self, name: str, reader: Reader) -> list[PendingWork]:
        try:
            items = reader()
        except Exception as exc:  # noqa: BLE001 - an unreadable source is reported, not trusted
            items = [PendingWork("unreadable source", name, detail=f"{type(exc).__name__}: {exc}")]
        now = self.clock()
        return [item.seen_since(self._first_seen.setdefault(item.key, now)) for item in items]

    def read_all(self) -> list[PendingWork]:
        """Every reader's items, parked ones included."""
        return [item for name, reader in self.readers.items() for item in self._read(name, reader)]

    def _quiet(self) -> bool:
        """Read the sources in order, stopping at the first with work (a busy system is read cheaply)."""
        self._last = []
        for name, reader in self.readers.items():
            items = self._read(name, reader)
            self._last += items
            if blocking(items):
                return False
        return True

    def wait(self, timeout: float, interval: float = INTERVAL) -> SettleOutcome:
        """Poll until quiet on ``QUIET_READS`` polls in a row, at most ``timeout`` seconds."""
        start = time.monotonic()
        streak = [0]

        def settled() -> bool:
            streak[0] = streak[0] + 1 if self._quiet() else 0
            return streak[0] >= QUIET_READS

        try:
            # lasting: two quiet reads in a row however far apart; a system that takes long gets fewer looks
            wait_until(settled, timeout=timeout, interval=interval, lasting=True, what="the system to settle")
        except WaitTimeout:
            return SettleOutcome(False, self.read_all(), time.monotonic() - start, timeout)
        parked = [item for item in self._last if not item.blocks]  # the last poll read every source
        return SettleOutcome(True, parked, time.monotonic() - start, timeout)
