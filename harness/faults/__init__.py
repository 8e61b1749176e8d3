"""Small fault objects: ``inject()`` / ``heal()``, context managers, recorded in the history.

A scenario uses them through ``jq.faults`` (a :class:`Faults`), which heals
every one of them before the run is judged. ``FAULTS`` / ``make_fault`` /
``from_spec`` build them by name, for config files and replays. Each fault
class is exported here under its class name; the list comes from the
registry (``registry.table()`` prints it), not from this file.
"""
from __future__ import annotations

from harness.faults.base import Fault
from harness.faults.fault_set import FaultHealWarning, Faults
from harness.faults.registry import FAULTS, from_spec, make_fault
from harness.faults.when import AtFailpoint, InFlight, Now, Queued, When

globals().update({cls.__name__: cls for cls in FAULTS.values()})

__all__ = sorted([
    "FAULTS", "AtFailpoint", "Fault", "FaultHealWarning", "Faults", "InFlight", "Now", "Queued", "When", "from_spec",
    "make_fault", *(cls.__name__ for cls in FAULTS.values()),
])
