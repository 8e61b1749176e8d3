"""Small fault objects: ``inject()`` / ``heal()``, context managers, recorded in the history.

A scenario uses them through ``jq.faults`` (a :class:`Faults`), which heals
every one of them before the run is judged. ``FAULTS`` / ``make_fault`` /
``from_spec`` build them by name, for config files and replays. Each fault
class is exported here under its class name (tests/unit/test_faults_registry.py
fails when one the registry holds is missing).
"""
from __future__ import annotations

# the registry first: it imports the fault modules in the order their faults are listed everywhere
from harness.faults.registry import FAULTS, from_spec, make_fault  # noqa: I001
from harness.faults.base import Fault
from harness.faults.client import DuplicateSubmission
from harness.faults.database import HoldDatabaseConnections, PoisonRow
from harness.faults.failpoint import ExhaustPool, Failpoint
from harness.faults.fault_set import FaultHealWarning, Faults
from harness.faults.network import HangEndpoint, NetworkToxic, ProxyDown
from harness.faults.provider import PaidAPIMode
from harness.faults.services import BrokerOutage, DatabaseRestart, PauseService, StopService
from harness.faults.when import AtFailpoint, InFlight, Now, Queued, When
from harness.faults.workers import KillWorker

__all__ = [
    "AtFailpoint", "BrokerOutage", "DatabaseRestart", "DuplicateSubmission", "ExhaustPool", "FAULTS", "Failpoint",
    "Fault", "FaultHealWarning", "Faults", "HangEndpoint", "HoldDatabaseConnections", "InFlight", "KillWorker",
    "NetworkToxic", "Now", "PaidAPIMode", "PauseService", "PoisonRow", "ProxyDown", "Queued", "StopService", "When",
    "from_spec", "make_fault",
]
