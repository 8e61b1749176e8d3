"""When a fault acts: ``Now()``, ``InFlight(job_id)``, ``AtFailpoint(name)`` or ``Queued(job_id)``.

``InFlight()`` without a job is the moment any job's paid call reaches the
provider: a kill then always lands mid-job, whoever holds the call, where a
kill ``Now()`` may find its worker idle (and, having changed nothing, is
judged not to have landed).

A moment is armed before the scenario goes on (a gate on the paid API, an
armed failpoint), so the fault cannot miss it however fast the app runs; it
is then awaited in the fault's own thread. Waits poll in short slices and
give up when the fault is healed, so a moment that never comes holds
nothing at teardown. ``Queued`` is read from the broker itself: it needs
nothing armed in the app.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from harness.errors import FaultError
from harness.faults import _params as p
from harness.history import vocabulary as v
from harness.paidapi.control import PaidAPIWaitTimeout

if TYPE_CHECKING:
    from harness.failpoints.control import Armed
    from harness.faults.base import Fault
    from harness.paidapi.control import Gate
    from harness.faults.target import RunTarget

__all__ = [
    "AtFailpoint", "DEFAULT_TIMEOUT", "InFlight", "MOMENTS", "Now", "POLL_SLICE", "QUEUE_POLL_S", "Queued", "When",
    "parse_when", "wait_for_moment", "waiting_messages",
]

DEFAULT_TIMEOUT = 30.0  # seconds a moment may take to come before the fault fails
POLL_SLICE = 0.2  # seconds per long-poll, so a heal is noticed quickly
QUEUE_POLL_S = 0.01  # how often the broker's queues are read: a message may wait only briefly


class When:
    """A moment; ``Now`` is the only immediate one."""

    immediate = False
    timeout = DEFAULT_TIMEOUT

    def spec(self) -> Any:
        raise NotImplementedError

    def arm(self, run: RunTarget, fault: str, *, hang: bool) -> None:
        """Prepare to catch the moment (``hang``: hold the app there rather than let it kill itself)."""

    def wait(self, run: RunTarget, cancelled: threading.Event, fault: str) -> dict[str, Any] | None:
        """Block until the moment; its details, None if cancelled; FaultError after ``timeout``."""
        return {}

    def disarm(self, run: RunTarget) -> None:
        """Undo ``arm`` (let anything held go on). Idempotent."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec()!r})"


class Now(When):
    """At once."""

    immediate = True

    def spec(self) -> Any:
        return "now"


class InFlight(When):
    """When the paid API holds a call of ``job_id`` (any job's if None) and ``step``: a gate pins it in flight."""

    def __init__(self, job_id: str | None = None, step: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        self.job_id = p.text(job_id, "in_flight.job_id", "kill_worker", optional=True)
        self.step = p.text(step, "in_flight.step", "kill_worker", optional=True)
        self.timeout = p.positive_number(timeout, "in_flight.timeout", "kill_worker")
        self._gate: Gate | None = None

    def spec(self) -> Any:
        return {"in_flight": {"job_id": self.job_id, "step": self.step, "timeout": self.timeout}}

    def arm(self, run: RunTarget, fault: str, *, hang: bool) -> None:
        self._gate = run.paidapi.gate(job_id=self.job_id, step=self.step)

    def wait(self, run: RunTarget, cancelled: threading.Event, fault: str) -> dict[str, Any] | None:
        deadline = time.monotonic() + self.timeout
        while not cancelled.is_set() and self._gate is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                whose = "any job" if self.job_id is None else f"job {self.job_id!r}"
                raise FaultError(f"no paid call of {whose} (step {self.step!r}) reached "
                                 f"the provider within {self.timeout:g}s", fault=fault)
            try:
                call = self._gate.wait(timeout=min(POLL_SLICE, left))
            except PaidAPIWaitTimeout:
                continue
            return {"call_id": call["call_id"], "job_id": call["job_id"], "step": call["step"],
                    "caller_pid": call.get("caller_pid")}
        return None

    def disarm(self, run: RunTarget) -> None:
        """Heal the gate: the held call goes on, and is billed though its client may be gone."""
        gate, self._gate = self._gate, None
        if gate is not None:
            gate.heal()


class AtFailpoint(When):
    """When the app reaches failpoint ``name`` (whose context matches ``match``)."""

    def __init__(self, name: str, match: dict[str, Any] | None = None,
                 timeout: float = DEFAULT_TIMEOUT):
        self.name = p.text(name, "at_failpoint.name", "kill_worker")
        self.match = p.string_dict(match, "at_failpoint.match", "kill_worker")
        self.timeout = p.positive_number(timeout, "at_failpoint.timeout", "kill_worker")
        self.action: str | None = None
        self._armed: Armed | None = None

    def spec(self) -> Any:
        return {"at_failpoint": {"name": self.name, "match": self.match, "timeout": self.timeout}}

    def arm(self, run: RunTarget, fault: str, *, hang: bool) -> None:
        # "kill": the process that fires SIGKILLs its own group (nothing runs after the seam);
        # "hang": it waits there until the harness has signalled it
        self.action = "hang" if hang else "kill"
        params = {} if hang else {"group": True}
        self._armed = run.failpoints.arm(self.name, self.action, once=True, match=self.match, **params)

    def wait(self, run: RunTarget, cancelled: threading.Event, fault: str) -> dict[str, Any] | None:
        deadline = time.monotonic() + self.timeout
        while not cancelled.is_set() and self._armed is not None:
            records = self._armed.triggers()
            if records:
                record = records[0]
                if "error" in record:
                    raise FaultError(f"failpoint {self.name!r} fired but failed in pid "
                                     f"{record['pid']}: {record['error']}", fault=fault)
                return {"failpoint": self.name, "fired_pid": record["pid"], "fired_t": record.get("t"),
                        "context": record.get("context")}
            if time.monotonic() >= deadline:
                raise FaultError(f"failpoint {self.name!r} (match {self.match!r}) was not reached "
                                 f"within {self.timeout:g}s", fault=fault)
            cancelled.wait(0.01)
        return None

    def disarm(self, run: RunTarget) -> None:
        armed, self._armed = self._armed, None
        if armed is not None:
            armed.heal()


class Queued(When):
    """When a message (one that mentions ``job_id``, if given) waits in the broker, taken by no worker yet.

    The harness reads the broker (Redis) itself: every list with items is a
    queue with messages waiting (Celery / kombu, RQ and Dramatiq keep queues
    in lists; a message a worker took is no longer there). An outage at that
    moment certainly loses the message: the broker comes back empty. (A
    message a worker took and has not acknowledged is lost only if that
    worker also dies: a worker that survives the outage finishes it.) A
    message waits only while no worker is free to take it (the workers busy
    or restarting, a backlog): on an idle app the moment may not come, and
    the fault fails after ``timeout``. What was seen is the moment's record.
    """

    def __init__(self, job_id: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        self.job_id = p.text(job_id, "queued.job_id", "broker_outage", optional=True)
        self.timeout = p.positive_number(timeout, "queued.timeout", "broker_outage")

    def spec(self) -> Any:
        return {"queued": {"job_id": self.job_id, "timeout": self.timeout}}

    def wait(self, run: RunTarget, cancelled: threading.Event, fault: str) -> dict[str, Any] | None:
        deadline = time.monotonic() + self.timeout
        while not cancelled.is_set():
            waiting = waiting_messages(run, self.job_id)
            if waiting:
                return {"waiting": sum(waiting.values()), "queues": sorted(waiting), "job_id": self.job_id}
            if time.monotonic() >= deadline:
                what = f"a message of job {self.job_id!r}" if self.job_id else "a message"
                raise FaultError(f"{what} did not wait in the broker within {self.timeout:g}s "
                                 f"(a message waits only while no worker is free to take it)", fault=fault)
            cancelled.wait(QUEUE_POLL_S)
        return None


def wait_for_moment(fault: Fault, when: When, cancelled: threading.Event) -> dict[str, Any] | None:
    """``when``'s moment for a deferred ``fault``; None, recorded as not fired, if it was healed first."""
    moment = when.wait(fault.run, cancelled, fault.name)
    if moment is None or cancelled.is_set():
        fault.record("info", v.INJECT, fired=False, reason="healed before the moment came")
        return None
    return moment


def waiting_messages(run: RunTarget, job_id: str | None = None) -> dict[str, int]:
    """Queue name -> messages waiting in the run's Redis (those that mention ``job_id``, if given).

    A broker that does not answer has nothing waiting that anyone could take.
    """
    import redis

    counts: dict[str, int] = {}
    try:
        with run.stack.redis.client() as conn:
            for key in conn.scan_iter(count=1000):
                if conn.type(key) != b"list":
                    continue
                if job_id is None:
                    count = conn.llen(key)
                else:
                    count = sum(job_id.encode() in item for item in conn.lrange(key, 0, -1))
                if count:
                    counts[key.decode(errors="replace")] = count
    except (redis.RedisError, OSError):
        return {}
    return counts


MOMENTS = {"now": Now, "in_flight": InFlight, "at_failpoint": AtFailpoint, "queued": Queued}


def parse_when(value: Any, fault: str = "kill_worker") -> When:
    """A ``When`` from itself, ``None``/"now", or ``{"in_flight" | "at_failpoint" | "queued": {...}}``."""
    if isinstance(value, When):
        return value
    if value is None or value == "now":
        return Now()
    if isinstance(value, dict) and len(value) == 1:
        (kind, args), = value.items()
        cls = MOMENTS.get(kind)
        if cls is Now:
            return Now()
        if cls is not None and isinstance(args, dict):
            try:
                moment: When = cls(**args)
            except TypeError as exc:
                raise FaultError(f"when = {value!r}: {exc}", fault=fault) from None
            return moment
    raise FaultError(f"when = {value!r}: expected Now(), InFlight(...), AtFailpoint(...), Queued(...), 'now', "
                     f"{{'in_flight': {{'job_id': ...}}}} (or {{}}: any job), {{'at_failpoint': {{'name': ...}}}} or "
                     f"{{'queued': {{}}}}", fault=fault)
