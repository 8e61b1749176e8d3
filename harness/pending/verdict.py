"""A settle that timed out, as a result in the verdict: what was pending, where, since when."""
from __future__ import annotations

import time

from harness.checks.result import Result, invalid_result
from harness.pending.item import blocking, describe_all
from harness.pending.settle import SettleOutcome

NAME = "settled_before_verdict"


def settle_result(outcome: SettleOutcome | None) -> Result | None:
    """None when the run settled (or never tried); else an invalid result listing the pending work.

    A verdict on a system still at work is premature: what runs after it is
    judged by no one, so an unsettled run fails even when every invariant held.
    """
    if outcome is None or outcome.settled:
        return None
    now = time.time()
    pending = blocking(outcome.pending)
    if not pending:  # quiet by the time it was read again: the deadline fell between two reads
        return None
    violations = [{**item.to_dict(), "what": item.describe(now)} for item in pending]
    return invalid_result(NAME, f"work still pending after {outcome.timeout:.1f} s of settling "
                                f"(settle_timeout); the verdict cannot see what runs after it:\n"
                                f"{describe_all(pending, now)}", violations)
