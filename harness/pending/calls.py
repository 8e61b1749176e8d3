"""Paid calls still in flight: they will still finish, and may still bill."""
from __future__ import annotations

from typing import Any

from harness.pending.item import PendingWork

# ledger states of a call that is still running (a gate holds some of them)
CALLS_STILL_RUNNING = ("in_flight", "held")


def calls_in_flight(ledger: list[dict[str, Any]]) -> list[PendingWork]:
    """One item per paid call that has not ended, dated by its start."""
    items = []
    for call in ledger:
        if call.get("state") not in CALLS_STILL_RUNNING:
            continue
        who = f"job {call.get('job_id')} step {call.get('step')!r} attempt {call.get('attempt')}"
        items.append(PendingWork(f"paid call {call.get('state')}", "the paid API", since=call.get("wall_start"),
                                 detail=f"{call.get('call_id')} ({who})",
                                 ids=(str(call.get("job_id")),)))
    return items
