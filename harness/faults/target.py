"""``RunTarget``: what a fault acts on, the parts of a scenario's run (``harness.run.Run``) faults use.

Faults sit below the run (the run makes ``Faults(self)``), so they name the
run's shape here instead of importing it; ``Run`` has every attribute below.
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from harness.config import Config
    from harness.failpoints.control import FailpointControl
    from harness.history import Record, Recorder
    from harness.paidapi.control import PaidAPIControl
    from harness.proxy.client import ProxyClient
    from harness.stack.stack import Stack
    from harness.stack.worker import WorkerPool

__all__ = ["RunTarget"]


class RunTarget(Protocol):
    """The scenario's run as a fault sees it: its stack and controls, where to record, its seed."""

    stack: Stack
    config: Config
    seed: int
    rng: random.Random
    history: Recorder
    record: Record
    paidapi: PaidAPIControl
    proxy: ProxyClient
    failpoints: FailpointControl
    workers: WorkerPool

    @property
    def database_dsn(self) -> str: ...
