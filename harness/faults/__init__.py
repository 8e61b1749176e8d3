"""Small fault objects: ``inject()`` / ``heal()``, context managers, recorded in the history.

==========================  ============================================================
fault                       what it does
==========================  ============================================================
``KillWorker``              SIGKILL (or SIGTERM) a worker's process group: now, while
                            the paid API holds a job's call, or at a failpoint
``PauseService``            SIGSTOP / SIGCONT any service, app process or worker
``HangEndpoint``            the paid API accepts and never answers: at the provider
                            (no work, no bill) or on the network (billed, answer lost)
``NetworkToxic``            any Toxiproxy toxic on a proxy (latency, reset_peer, ...)
``ProxyDown``               a proxy stops listening ("connection refused")
``ExhaustPool``             in-process, at a failpoint: the app's pool is emptied
``HoldDatabaseConnections`` black-box: every Postgres connection slot taken
``PoisonRow``               a row the app's per-row work raises on
``BrokerOutage``            Redis stopped; healed empty, on the same port
``DatabaseRestart``         Postgres restarted; data kept, sessions cut
``DuplicateSubmission``     the client sends the same upload again
``Failpoint``               any failpoint armed as a fault
==========================  ============================================================

A scenario uses them through ``jq.faults`` (a :class:`Faults`), which heals
every one of them before the run is judged. ``FAULTS`` / ``make_fault`` /
``from_spec`` build them by name, for config files and replays.
"""
from __future__ import annotations

from harness.faults.base import Fault
from harness.faults.client import DuplicateSubmission
from harness.faults.database import HoldDatabaseConnections, PoisonRow
from harness.faults.failpoint import ExhaustPool, Failpoint
from harness.faults.nemesis import FaultHealWarning, Faults
from harness.faults.network import HangEndpoint, NetworkToxic, ProxyDown
from harness.faults.registry import FAULTS, from_spec, make_fault
from harness.faults.services import BrokerOutage, DatabaseRestart, PauseService
from harness.faults.when import AtFailpoint, InFlight, Now, When
from harness.faults.workers import KillWorker

__all__ = [
    "FAULTS",
    "AtFailpoint",
    "BrokerOutage",
    "DatabaseRestart",
    "DuplicateSubmission",
    "ExhaustPool",
    "Failpoint",
    "Fault",
    "FaultHealWarning",
    "Faults",
    "HangEndpoint",
    "HoldDatabaseConnections",
    "InFlight",
    "KillWorker",
    "NetworkToxic",
    "Now",
    "PauseService",
    "PoisonRow",
    "ProxyDown",
    "When",
    "from_spec",
    "make_fault",
]
