"""Play a schedule's faults against a run: inject each at its time, heal it after its duration.

Faults are built from their specs by the registry and injected through the
run's ``Faults`` (so the run heals whatever is left before it is judged).
A fault that cannot be injected (its service is already down, its moment
never came) is recorded and counted, and the schedule goes on: a nightly
run reports what landed, it does not stop at the first refusal.

A fault that switches a defence off (``extends_bound`` false) is healed at
its planned time only if the jobs it was meant to expose have been judged:
while a delaying fault that began before its planned heal is still active,
or a job accepted before that fault's heal is neither ended nor reported
stuck, the defence stays off. Without this, how long a heal took (a fresh
worker starts in 5 s on a quiet machine, 13 s on a busy one) would decide
whether the defence returned before the job bound ran out, and the same
schedule would fail on one run and pass on the next.

The nemesis also plays the deployment's process supervisor (systemd's
``Restart=always``, a Kubernetes Deployment): a worker that exited on its
own (Celery's worker quits with "Unrecoverable error" when the broker
connection drops under an ack) is started again, as production would,
and the restart is recorded (``nightly ok worker_restart``). A worker a kill
fault took down is left to that fault's heal.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.errors import FaultError, WaitTimeout
from harness._wait import wait_until
from harness.faults import Fault, from_spec
from harness.nightly.schedule import Planned
from harness.nightly.transit import KILL, OUTAGE, Loss

SOURCE = "nightly"
HOLD_POLL_S = 0.2  # how often a held defence looks again whether it may return
SUPERVISE_S = 0.5  # how often the supervisor looks for a worker that exited on its own


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
        # the monitor's answer to "has every job accepted before run second t ended or been reported stuck?"
        self.judged: Callable[[float], bool] = lambda t: True
        self.windows = [Window(i, planned) for i, planned in enumerate(faults)]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._play, args=(w,), name=f"nightly-fault-{w.index}",
                                          daemon=True) for w in self.windows]
        # the supervisor outlives the timeline: the app settles after the last heal, and may crash then too
        self._unsupervised = threading.Event()
        self._supervisor = threading.Thread(target=self._supervise, name="nightly-supervisor", daemon=True)

    def start(self) -> None:
        for thread in self._threads:
            thread.start()
        self._supervisor.start()

    def now(self) -> float:
        return time.monotonic() - self.started

    def _play(self, window: Window) -> None:
        if self._stop.wait(max(0.0, window.planned.at - self.now())):
            return
        self._inject(window)
        if self._stop.wait(max(0.0, window.planned.heal_at - self.now())):
            return
        while not self.may_return(window):  # a defence stays off until its jobs are judged
            if self._stop.wait(HOLD_POLL_S):
                return  # finish() heals it
        self._heal(window)

    def _supervise(self) -> None:
        while not self._unsupervised.wait(SUPERVISE_S):
            self.restart_exited_workers()

    def stop_supervising(self) -> None:
        """Stop restarting workers (once the app has settled, before the verdict)."""
        self._unsupervised.set()
        if self._supervisor.is_alive():
            self._supervisor.join(60)

    def restart_exited_workers(self, exclude: Window | None = None) -> list[int]:
        """Start again each worker that exited on its own; never one a kill under way took down.

        None at all while a kill is yet to fire: a deferred kill finds the
        worker it took among those running when it fired, so none may be
        replaced meanwhile. ``exclude``: the kill being injected now (it has
        not fired, and wants its worker running).
        """
        workers = getattr(self.run, "workers", None)
        if workers is None:
            return []
        with self._lock:
            killing = [w.fault for w in self.windows
                       if w is not exclude and w.planned.spec.get("fault") == "kill_worker"
                       and w.fault is not None and w.healed_at is None and w.error is None]
        if any(getattr(fault, "kill_record", None) is None for fault in killing):
            return []
        taken = {index for fault in killing for index in getattr(fault, "killed", ())}  # their heals replace them
        restarted = workers.replace_dead(keep=taken)  # the pool's own lock: one replacement of a worker at a time
        for index in restarted:
            self.run.history.record(SOURCE, "ok", "worker_restart",
                                    data={"worker": workers[index].name, "t": round(self.now(), 3)})
        return restarted

    def may_return(self, window: Window) -> bool:
        """May this fault heal now? A delaying fault always; a defence once the jobs it exposed were judged.

        Those jobs: every job accepted before the last heal of a delaying
        fault planned to begin while the defence was off (a job one of them
        may have lost on the way counts as judged: it waits for the defence).
        """
        if window.planned.extends_bound:
            return True
        with self._lock:
            delaying = [w for w in self.windows if w.planned.extends_bound and w.planned.at < window.planned.heal_at
                        and not (w.injected_at is None and w.error is not None)]  # skip one that never landed
            if any(w.healed_at is None for w in delaying):
                return False
            last_heal = max((w.healed_at for w in delaying if w.healed_at is not None), default=None)
        return last_heal is None or self.judged(last_heal)

    def _inject(self, window: Window) -> None:
        began = self.now()  # the window opens when inject() starts: its "ok" event falls inside
        try:
            fault = from_spec(window.planned.spec)
            window.fault = fault
            window.params = fault.params()
            if window.planned.spec.get("fault") == "kill_worker":
                # the supervisor looks every SUPERVISE_S: a worker that exited on its own just now
                # (Celery quits when the broker goes away under an ack) would make the kill miss
                self.restart_exited_workers(exclude=window)
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

    def finish(self, hold: float = 0.0) -> None:
        """Heal what is still active and note the heal times.

        Delaying faults heal at once; a defence still off waits up to ``hold``
        seconds for the jobs it exposed to be judged (see ``may_return``).
        """
        self.stop()
        for window in self.windows:
            if window.active and window.planned.extends_bound:
                self._heal(window)
        held = [w for w in self.windows if w.active]
        if held and hold > 0:
            try:
                wait_until(lambda: all(self.may_return(w) for w in held), timeout=hold, interval=HOLD_POLL_S,
                           what="the jobs a defence's absence exposed to be judged")
            except WaitTimeout:
                pass  # the defence returns now; the monitor still judges what is left
        for window in held:
            self._heal(window)

    # -- what the monitor asks -----------------------------------------------------------
    def bound_start(self) -> tuple[bool, float]:
        """(a bound-extending fault is active now, the latest heal time of one so far)."""
        with self._lock:
            active = any(w.active and w.planned.extends_bound for w in self.windows)
            healed = [w.healed_at for w in self.windows if w.planned.extends_bound and w.healed_at is not None]
        return active, max(healed, default=0.0)

    def losses(self) -> list[Loss]:
        """Each moment a fault may have destroyed messages no task had started (a worker's whole group
        killed, the broker gone), while a defence was off (see ``harness.nightly.transit``)."""
        found = []
        with self._lock:
            defences = [(w, w.injected_at) for w in self.windows
                        if w.planned.spec.get("defence_off") and w.injected_at is not None]
            for window in self.windows:
                t = _lost_at(window)
                if t is None:
                    continue
                run_t = t - self.started
                off = next((d for d, began in defences
                            if began <= run_t and (d.healed_at is None or run_t <= d.healed_at)), None)
                if off is not None:
                    found.append(Loss(t, window.planned.spec["fault"], window.index, off.index))
        return found

    def counts(self) -> tuple[int, int, int]:
        """(injected, active, failed to inject)."""
        with self._lock:
            injected = sum(w.injected_at is not None for w in self.windows)
            active = sum(w.active for w in self.windows)
            failed = sum(w.injected_at is None and w.error is not None for w in self.windows)
        return injected, active, failed


def _lost_at(window: Window) -> float | None:
    """When ``window``'s fault may have destroyed messages (monotonic), if it is such a fault and happened."""
    fault, kind = window.fault, window.planned.spec.get("fault")
    if kind == KILL:
        record = getattr(fault, "kill_record", None) or {}
        return record.get("killed_t") if record.get("group") else None  # a lone signal leaves the main process
    if kind == OUTAGE:
        return (getattr(fault, "outage", None) or {}).get("stopped_t")
    return None
