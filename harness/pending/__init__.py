"""Work that can still happen after a scenario's body: where it waits and how to wait for it.

One reader per place (``database``: jobs not terminal and the app's
``pending_queries``; ``broker``: the Redis broker's queues, unacknowledged
and scheduled messages; ``sqs``: visible, in-flight and delayed messages,
dead letters; ``calls``: paid calls in flight), each returning
``PendingWork`` items; ``Settler`` polls them until quiet
(``settle.py``); ``sources.Sources(run)`` wires them to a running stack;
``verdict.settle_result`` turns a timed-out settle into a failed result.
"""
from __future__ import annotations

from harness.pending.item import PendingWork, blocking, describe_all
from harness.errors import SettleTimeout
from harness.pending.settle import SettleOutcome, Settler

__all__ = ["PendingWork", "SettleOutcome", "SettleTimeout", "Settler", "blocking", "describe_all"]
