"""``KillWorker``: signal a Celery worker's whole process group, now or at a chosen moment.

``SIGKILL`` (the default) goes to the whole process group: the main process
and its pool children end at once, no handler runs, the unacked task stays
in the broker. Any other signal goes to the main process only (``group``
says otherwise): ``SIGTERM`` there is Celery's warm shutdown, the running
task finishes, then the worker exits. (Sent to the whole group, SIGTERM
would end the pool children too, and the task with them.)

The moment (``when``):

- ``Now()``: at once, the worker named ``worker`` (as ``jq.stack`` names
  it; default: the pool's first).
- ``InFlight(job_id, step)``: a paid-API gate holds the job's call (any
  job's with ``InFlight()``: the kill then lands mid-job whichever job it
  is); once it is held, the worker whose process tree holds it (the ledger's
  ``caller_pid``, header ``X-Caller-Pid``) is killed, then the gate is released, so the provider generates and bills
  with its client gone. A call whose caller cannot be identified (no
  header, or a pid in no worker's tree) is an error: no worker is killed.
- ``AtFailpoint(name, match)``: when the app reaches the failpoint. With
  SIGKILL the process that fires kills its own group from inside (nothing
  after the seam runs); with another signal it hangs there until the
  harness has signalled its worker. Either way the worker killed is the one
  that fired.

A deferred moment names the worker itself, so ``worker`` is given with
``Now()`` only.

A deferred kill (not ``Now``) is armed by ``inject()`` and fires from a
thread; ``wait()`` blocks until it has and returns the kill record. ``heal()`` disarms what has not
fired and, with ``replace=True``, starts a fresh worker in each killed one's
place. Worker lifecycle events go through the pool's event hook (the
plugin records them); without one, the fault records them itself.
"""
from __future__ import annotations

import os
import signal as signals
import threading
import time
from typing import Any

from harness._proc import process_tree
from harness._wait import wait_until
from harness.errors import FaultError, FaultWaitTimeout, WaitTimeout
from harness.faults import _params as p
from harness.faults.base import DEFERRED, Fault
from harness.faults.when import AtFailpoint, InFlight, Queued, When, parse_when, wait_for_moment
from harness.history import vocabulary as v

__all__ = ["JOIN_TIMEOUT", "KillWorker"]

JOIN_TIMEOUT = 30.0  # seconds heal() waits for a kill that is under way


class KillWorker(Fault):
    """Kill ``worker`` (or the one the moment names) with ``signal`` at moment ``when``."""

    name = "kill_worker"

    def __init__(self, worker: str | None = None, signal: signals.Signals | int | str = signals.SIGKILL,
                 when: When | dict[str, Any] | str | None = None, replace: bool = True,
                 group: bool | None = None):
        super().__init__()
        self.worker = p.text(worker, "worker", self.name, optional=True)
        self.signal = p.parse_signal(signal, self.name)
        self.when: When = parse_when(when)
        if isinstance(self.when, Queued):
            raise self.error("when=Queued(...) names no worker to kill: it is a moment for a broker fault "
                             "(broker_outage); use Now(), InFlight(job_id) or AtFailpoint(name)")
        if self.worker is not None and not self.when.immediate:
            raise self.error(f"worker={self.worker!r} with when={self.when.spec()!r}: a deferred moment "
                             f"names the worker itself (the one that holds the call / fires the failpoint)")
        for key, value in (("replace", replace), ("group", group)):
            if not isinstance(value, bool) and not (key == "group" and value is None):
                raise self.error(f"{key} must be True or False, got {value!r}")
        self.replace = replace
        self.group = self.signal == signals.SIGKILL if group is None else group
        self.killed: list[int] = []  # pool indexes of the workers this fault killed
        self.kill_record: dict[str, Any] | None = None  # what the kill did, once it happened
        self._thread: threading.Thread | None = None
        self._candidates: list[Any] = []
        self._cancelled = threading.Event()
        self._settled = threading.Event()  # the kill happened, failed, or was called off
        self._fired = False

    def params(self) -> dict[str, Any]:
        return {"worker": self.worker, "signal": self.signal.name, "when": self.when.spec(),
                "replace": self.replace, "group": self.group}

    # -- inject ----------------------------------------------------------------------
    def _inject(self) -> Any:
        pool = self.run.workers
        if isinstance(self.when, (AtFailpoint, InFlight)):  # the moment names the worker
            if not any(w.is_running() for w in pool.workers):
                raise self.error("no worker is running")
        else:
            index = self._index_of(self.worker)
            if not pool[index].is_running():
                raise self.error(f"{pool[index].name} is already dead")
        self.killed, self.failure, self.kill_record = [], None, None
        self._candidates = [w for w in pool.workers if w.is_running()]  # who may fire a failpoint
        self._cancelled.clear()
        self._settled.clear()
        self._fired = False
        if self.when.immediate:
            details = self.kill_record = self._kill(index)
            self._fired = True
            self._settled.set()
            return details
        # only a SIGKILL of the whole group can come from inside; any other kill waits for the harness
        self.when.arm(self.run, self.name, hang=not (self.signal == signals.SIGKILL and self.group))
        self._thread = threading.Thread(target=self._fire_later, name=f"fault {self.name}", daemon=True)
        self._thread.start()
        return DEFERRED

    def _fire_later(self) -> None:
        try:
            moment = wait_for_moment(self, self.when, self._cancelled)
            if moment is None:
                return
            if isinstance(self.when, AtFailpoint):
                details = self._at_failpoint(moment)
            else:
                details = self._kill(self._holder_of(moment))
                self.when.disarm(self.run)  # release the gate: the provider bills, the client is gone
            self.kill_record = {**moment, **details}
            self._fired = True
            self.record("ok", v.INJECT, **self.kill_record)
        except Exception as exc:  # noqa: BLE001 - reported by wait() and heal_all()
            self.failure = exc if isinstance(exc, FaultError) else self.error(f"{type(exc).__name__}: {exc}")
            self.record("fail", v.INJECT, error=str(self.failure))
        finally:
            self._settled.set()

    def _index_of(self, name: str | None) -> int:
        """The pool index of the worker called ``name`` (None: the first); FaultError naming the workers."""
        workers = self.run.workers.workers
        if not workers:
            raise self.error("the stack has no workers")
        if name is None:
            return 0
        for index, worker in enumerate(workers):
            if worker.name == name:
                return index
        raise self.error(f"no worker {name!r}; the workers are: {', '.join(w.name for w in workers)}")

    def _kill(self, index: int) -> dict[str, Any]:
        pool = self.run.workers
        worker = pool[index]
        if not worker.is_running():
            raise self.error(f"worker {index} ({worker.name}) is already dead")
        pid = worker.pid
        assert pid is not None  # a running worker has one
        tree = process_tree(pid)  # who was in it: the evidence that it held the call
        killed_t = time.monotonic()  # (monotonic) what a message lost with the worker was lost at
        if self.group:
            pool.kill(index, self.signal)  # SIGKILL: returns once the group is reaped
        else:
            os.kill(pid, self.signal)
        self.killed.append(index)
        self._worker_event(v.WORKER_KILLED, worker, pid=pid, signal=self.signal.name, group=self.group,
                           force=not self.group)
        return {"worker": worker.name, "pid": pid, "tree": tree, "signal": self.signal.name, "group": self.group,
                "killed_t": killed_t}

    def _holder_of(self, moment: dict[str, Any]) -> int:
        """The index of the worker whose process tree made the held call; FaultError if none can be named."""
        caller = moment.get("caller_pid")
        if caller is None:
            raise self.error(f"cannot tell which worker holds call {moment.get('call_id')} of job "
                             f"{moment.get('job_id')}: the call carries no X-Caller-Pid header; no worker "
                             f"was killed")
        holder = self.run.workers.holding(int(caller))
        if holder is None:
            raise self.error(f"call {moment.get('call_id')} of job {moment.get('job_id')} was made by pid "
                             f"{caller}, which is in no running worker's process tree; no worker was killed")
        return self.run.workers.workers.index(holder)

    def _at_failpoint(self, moment: dict[str, Any]) -> dict[str, Any]:
        pool = self.run.workers
        if isinstance(self.when, AtFailpoint) and self.when.action == "hang":
            index = self._worker_of(moment["fired_pid"])
            details = self._kill(index)
            self.when.disarm(self.run)  # lets the held caller go (a warm shutdown waits for it)
            return details
        try:  # the firing process SIGKILLed its own group: find which worker that was
            dead = wait_until(lambda: [i for i, w in enumerate(pool.workers)
                                       if w in self._candidates and not w.is_running()],
                              timeout=10, what="the worker that fired to die")
        except WaitTimeout as exc:
            raise self.error(f"failpoint {moment['failpoint']!r} fired in pid {moment['fired_pid']} "
                             f"but no worker died: is it a worker process?") from exc
        self.killed.extend(dead)
        for index in dead:
            self._worker_event(v.WORKER_KILLED, pool[index], signal="SIGKILL",
                               by=f"failpoint {moment['failpoint']}", force=True)
        # the process that fired killed its group right after recording the trigger
        return {"worker": ",".join(pool[i].name for i in dead), "signal": "SIGKILL", "group": True,
                "killed_t": moment.get("fired_t")}

    def _worker_of(self, pid: int) -> int:
        """The index of the worker whose process tree holds the process ``pid`` that reached the failpoint."""
        holder = self.run.workers.holding(pid)
        if holder is not None:
            return self.run.workers.workers.index(holder)
        if not os.path.exists(f"/proc/{pid}"):
            raise self.error(f"the process {pid} that reached the failpoint is gone")
        raise self.error(f"the process {pid} that reached the failpoint is not in any worker's process tree")

    # -- waiting and healing -------------------------------------------------------
    @property
    def fired(self) -> bool:
        """True once the kill happened."""
        return self._fired

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        """Block until the kill happened; return its record (``worker``, ``pid``, ``tree``, ``signal``...).

        ``FaultWaitTimeout`` (a ``WaitTimeout``) when it has not happened
        within ``timeout`` (default: the moment's own bound plus a margin);
        ``FaultError`` when it failed, or was healed before its moment came.
        """
        bound = (self.when.timeout + JOIN_TIMEOUT) if timeout is None else timeout
        if not self._settled.wait(bound):
            raise FaultWaitTimeout(f"the kill did not happen within {bound:g}s (moment {self.when.spec()!r})",
                                   fault=self.name, seen={"fired": False, "when": self.when.spec()})
        if self.failure is not None:
            raise self.failure
        if not self._fired or self.kill_record is None:
            raise self.error("healed before the moment came: no worker was killed")
        return dict(self.kill_record)

    def _heal(self) -> dict[str, Any]:
        self._cancelled.set()
        self.when.disarm(self.run)
        if self._thread is not None:
            self._thread.join(JOIN_TIMEOUT)
            self._thread = None
        killed, self.killed = self.killed, []
        replaced = []
        for index in killed if self.replace else ():
            pool = self.run.workers
            self._let_shut_down(pool[index])
            self._worker_event(v.WORKER_EXITED, pool[index])
            fresh = pool.replace(index)
            self._worker_event(v.WORKER_READY, fresh)
            replaced.append({"worker": fresh.name, "pid": fresh.pid})
        # a moment that never came is not a failed heal: it stays in ``failure`` for heal_all()
        return {"killed": killed, "replaced": replaced, "fired": bool(killed)}

    @staticmethod
    def _let_shut_down(worker: Any) -> None:
        """Give a warm shutdown its time: replacing stops the worker, and a stop ends its task."""
        try:
            wait_until(lambda: not worker.is_running(), timeout=worker.stop_timeout,
                       what=f"{worker.name} to shut down")
        except WaitTimeout:
            pass  # replace() stops it the hard way

    def _worker_event(self, name: v.WorkerLifecycle, worker: Any, *, force: bool = False, **data: Any) -> None:
        """Record a lifecycle event unless the pool's hook already does (it does for kill/replace)."""
        if self.run.workers.on_event is not None and not force:
            return
        self.run.record.worker(name, worker.name, **{"pid": worker.pid, **data})
