"""Gates: pin a model call in flight until the scenario says go.

A gate matches calls by job, step and/or route (unset fields match
anything). A matching call is accepted, then held before generation starts,
until the gate opens. That lets a scenario act at an exact moment, e.g.
kill the worker while its call is held, then release the gate so the
provider finishes and bills although the client is gone.

A released gate stays open: later matching calls pass straight through.
Removing a gate releases it too. Reset and shutdown instead *abort* it:
the held calls are answered 503 without generating.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from harness.paidapi.ledger import CallRecord


@dataclass
class Gate:
    """One gate and the ids of the calls it has held."""

    gate_id: int
    job_id: str | None = None
    step: str | None = None
    route: str | None = None
    aborted: bool = False
    held: list[int] = field(default_factory=list)
    opened: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def is_open(self) -> bool:
        """True once released, removed or aborted."""
        return self.opened.is_set()

    def matches(self, record: CallRecord) -> bool:
        """True when this gate should hold the call."""
        return (
            (self.job_id is None or self.job_id == record.job_id)
            and (self.step is None or self.step == record.step)
            and (self.route is None or self.route == record.route)
        )

    def open(self, *, abort: bool = False) -> None:
        """Let held calls go on (or, with ``abort``, fail them)."""
        self.aborted = self.aborted or abort
        self.opened.set()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form returned by the control API."""
        return {
            "gate_id": self.gate_id, "job_id": self.job_id, "step": self.step,
            "route": self.route, "open": self.is_open, "held": list(self.held),
        }


class GateTable:
    """The gates in place."""

    def __init__(self) -> None:
        self._gates: dict[int, Gate] = {}
        self._next_id = 1

    def add(self, *, job_id: str | None = None, step: str | None = None,
            route: str | None = None) -> Gate:
        """Add a closed gate."""
        gate = Gate(self._next_id, job_id=job_id, step=step, route=route)
        self._next_id += 1
        self._gates[gate.gate_id] = gate
        return gate

    def get(self, gate_id: int) -> Gate | None:
        """The gate with this id, if any."""
        return self._gates.get(gate_id)

    def closed_gate_for(self, record: CallRecord) -> Gate | None:
        """The oldest closed gate that should hold this call, if any."""
        return next(
            (g for g in self._gates.values() if not g.is_open and g.matches(record)), None
        )

    def release(self, gate_id: int) -> Gate | None:
        """Open a gate for good; None if there is no such gate."""
        gate = self._gates.get(gate_id)
        if gate is not None:
            gate.open()
        return gate

    def remove(self, gate_id: int) -> Gate | None:
        """Release and forget a gate; None if there is no such gate."""
        gate = self._gates.pop(gate_id, None)
        if gate is not None:
            gate.open()
        return gate

    def abort_all(self) -> None:
        """Fail every held call and forget every gate."""
        for gate in self._gates.values():
            gate.open(abort=True)
        self._gates.clear()

    def gates(self) -> list[Gate]:
        """The gates, oldest first."""
        return list(self._gates.values())
