"""Play a schedule's faults against a run: inject each at its time, heal it after its duration.

Faults are built from their specs by the registry and injected through the
run's ``Faults`` (so the run heals whatever is left before it is judged).
A fault that cannot be injected (its service is already down, its moment
never came) is recorded and counted, and the schedule goes on: a nightly
run reports what landed, it does not stop at the first refusal.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from harness.errors import FaultError
from harness.faults import Fault, from_spec
from harness.nightly.schedule import Planned

SOURCE = "nightly"


@dataclass
class Window:
    """What happened to one planned fault: when it was injected and healed (run seconds), or why not."""

    index: int
    planned: Planned
    injected_at: float | None = None
    healed_at: float | None = None
    error: str | None = None
    params: dict[str, Any] | None = None  # as the fault records them in its history events
    fault: Fault | None = field(default=None, repr=False)

    @property
    def active(self) -> bool:
        return self.injected_at is not None and self.healed_at is None

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "kind": self.planned.kind, "label": self.planned.label(),
                "spec": self.planned.spec, "planned_at": self.planned.at, "planned_lasts": self.planned.lasts,
                "extends_bound": self.planned.extends_bound, "injected_at": self.injected_at,
                "healed_at": self.healed_at, "error": self.error, "params": self.params}


class Nemesis:
    """Plays each planned fault in its own thread (a slow heal, such as starting a fresh worker,
    delays no other fault); ``windows`` says what happened to each."""

    def __init__(self, run: Any, faults: tuple[Planned, ...], started: float):
        self.run = run
        self.started = started
        self.windows = [Window(i, planned) for i, planned in enumerate(faults)]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._play, args=(w,), name=f"nightly-fault-{w.index}",
                                          daemon=True) for w in self.windows]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def now(self) -> float:
        return time.monotonic() - self.started

    def _play(self, window: Window) -> None:
        if self._stop.wait(max(0.0, window.planned.at - self.now())):
            return
        self._inject(window)
        if not self._stop.wait(max(0.0, window.planned.heal_at - self.now())):
            self._heal(window)

    def _inject(self, window: Window) -> None:
        began = self.now()  # the window opens when inject() starts: its "ok" event falls inside
        try:
            fault = from_spec(window.planned.spec)
            window.fault = fault
            window.params = fault.params()
            self.run.faults.inject(fault)
            with self._lock:
                window.injected_at = round(began, 3)
        except FaultError as exc:
            window.error = str(exc)
        self._record(window, "inject")

    def _heal(self, window: Window) -> None:
        with self._lock:
            if window.fault is None or window.injected_at is None or window.healed_at is not None:
                return
        try:
            window.fault.heal()
        except FaultError as exc:  # the run's heal_all tries again before the verdict
            window.error = f"heal: {exc}"
        with self._lock:
            window.healed_at = round(self.now(), 3)
        self._record(window, "heal")

    def _record(self, window: Window, step: str) -> None:
        kind = "fail" if window.error else "ok"
        self.run.history.record(SOURCE, kind, f"fault_{step}", data=window.to_dict())

    def stop(self) -> None:
        """Stop the timeline (faults still active are healed by ``finish`` or the run's ``heal_all``)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(60)

    def finish(self) -> None:
        """Heal what is still active and note the heal times."""
        self.stop()
        for window in self.windows:
            if window.active:
                self._heal(window)

    # -- what the monitor asks -----------------------------------------------------------
    def bound_start(self) -> tuple[bool, float]:
        """(a bound-extending fault is active now, the latest heal time of one so far)."""
        with self._lock:
            active = any(w.active and w.planned.extends_bound for w in self.windows)
            healed = [w.healed_at for w in self.windows if w.planned.extends_bound and w.healed_at is not None]
        return active, max(healed, default=0.0)

    def counts(self) -> tuple[int, int, int]:
        """(injected, active, failed to inject)."""
        with self._lock:
            injected = sum(w.injected_at is not None for w in self.windows)
            active = sum(w.active for w in self.windows)
            failed = sum(w.injected_at is None and w.error is not None for w in self.windows)
        return injected, active, failed
