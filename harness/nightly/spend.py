"""Duplicate spend while a nightly runs: billed calls beyond the first per job and step, read in parts.

The progress display shows it every few seconds; reading the provider's
whole ledger each time would ship a long run's tens of thousands of calls
again and again (quadratic in the run's length, and most of the fake
provider's CPU at 50 jobs/s). Each read asks only for the calls above the
oldest one still open at the previous read: a call that was open then may
have been billed since, a closed one cannot change.
"""
from __future__ import annotations

from typing import Any, Callable

from harness.paidapi.ledger import FINAL_STATES

LedgerRead = Callable[[int], list[dict[str, Any]]]  # call records above a call id, oldest first


class SpendWatch:
    """``update()`` reads the new part of the ledger and returns the duplicates counted so far."""

    def __init__(self, read: LedgerRead):
        self._read = read
        self._after = 0  # every call at or below this id is closed and counted
        self._billed: dict[tuple[Any, Any], set[int]] = {}  # (job, step) -> billed call ids
        self.duplicates = 0

    def update(self) -> int:
        records = self._read(self._after)
        still_open = []
        for call in records:
            if call.get("state") not in FINAL_STATES:
                still_open.append(call["call_id"])
            if call.get("billed") and call.get("job_id") is not None:
                ids = self._billed.setdefault((call["job_id"], call.get("step")), set())
                if call["call_id"] not in ids:
                    ids.add(call["call_id"])
                    self.duplicates += len(ids) > 1
        if records:
            self._after = min(still_open) - 1 if still_open else records[-1]["call_id"]
        return self.duplicates
