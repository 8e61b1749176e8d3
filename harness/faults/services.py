"""Faults on whole services: pause one, take the broker away, restart the database.

``PauseService`` freezes a service (SIGSTOP to its process group, or the
cgroup freezer of ``docker pause``): connections stay open, nothing
answers, clients wait for their timeouts (the closest local thing to a
frozen VM or a long GC pause). ``BrokerOutage`` stops Redis: clients get
"connection refused" at once, and because the embedded Redis keeps no data
on disk, whatever was queued is gone when it comes back on the same port.
``DatabaseRestart`` stops and starts Postgres (a fast shutdown: open
sessions are cut); the data stays, and pools that pre-ping reconnect.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import redis

from harness._proc import process_tree
from harness._wait import wait_until
from harness.errors import FaultError, FaultWaitTimeout, ServiceError, WaitTimeout
from harness.faults import _params as p
from harness.faults._app_logs import AppLogWatch
from harness.faults.base import DEFERRED, Fault
from harness.faults.when import When, parse_when, wait_for_moment, waiting_messages
from harness.history import vocabulary as v

if TYPE_CHECKING:
    from harness.faults.target import RunTarget
    from harness.stack.process import ProcessService

__all__ = [
    "BROKER_ERRORS", "BrokerOutage", "DATABASE_GONE", "DatabaseRestart", "EFFECT_TIMEOUT", "PauseService",
    "STALL_ERRORS", "StopService", "is_frozen", "process_state", "resolve_service", "role_of",
]

# what Celery / kombu / redis-py log when the broker is gone (the app's evidence of an outage)
BROKER_ERRORS = r"cannot connect to redis|connection refused|error while reading from|connectionerror|" \
                r"connection to broker lost|OperationalError"
# what the app logs when a service it waits on is frozen (its client timed out) or cut off
STALL_ERRORS = r"timed out|timeouterror|timeout error|connection (refused|reset|lost|error)|connectionerror|" \
               r"cannot connect|OperationalError|server closed the connection"
# what the app logs when Postgres went away under it: psycopg's errors, and SQLAlchemy's
# pool (logged at INFO by refapp) when a pre-ping found a dead connection and reconnected
DATABASE_GONE = r"OperationalError|server closed the connection|terminating connection|" \
                r"connection refused|could not connect|the database system is|pre-ping.*failed|" \
                r"disconnection detected|invalidate connection"
EFFECT_TIMEOUT = 5.0  # seconds a fault may take to show its effect


def resolve_service(run: RunTarget, name: str, fault: str) -> ProcessService:
    """The stack's service, app process or worker called ``name`` (``jq.stack.service(name)``)."""
    try:
        return run.stack.service(name)
    except ServiceError as exc:
        raise FaultError(f"no service {name!r}; known: {', '.join(run.stack.service_names())}",
                         fault=fault) from exc


def role_of(run: RunTarget, target: ProcessService) -> str:
    """``worker``, ``infrastructure`` or ``app``: what the landing rules tell apart."""
    if target in run.stack.workers.workers:
        return "worker"
    return "infrastructure" if target in run.stack.infrastructure else "app"


def process_state(pid: int) -> str:
    """The one-letter state of a process (``T``: stopped); ``X`` when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "X"


def is_frozen(pid: int) -> bool:
    """Stopped by SIGSTOP (process backend) or frozen by its cgroup (``docker pause``).

    The cgroup freezer leaves the process state as it was (often ``D``), so the
    freezer's own state is read: ``freezer.state`` under cgroup v1,
    ``cgroup.events`` under v2.
    """
    if process_state(pid) in ("T", "t"):
        return True
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().strip().splitlines()
    except OSError:
        return False
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        if "freezer" in controllers.split(","):
            return _read(f"/sys/fs/cgroup/freezer{path}/freezer.state").strip() == "FROZEN"
        if controllers == "" and path != "/":
            return "frozen 1" in _read(f"/sys/fs/cgroup{path}/cgroup.events")
    return False


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


class PauseService(Fault):
    """SIGSTOP the service's process group; heal sends SIGCONT.

    The history gets what the landing rule needs: the frozen process tree
    (``pid``, ``tree``: whose paid calls were held) and, read at heal before
    the resume, what the app logged meanwhile that matches ``STALL_ERRORS``
    and whether it was still frozen. ``defence_off=True`` says the pause
    switches a defence off (a sweeper), whose effect is an absence.

    A frozen process keeps its connections, and its open transactions keep
    their row locks: the database cannot tell it from a slow one. To freeze
    it inside a transaction, hold it there with a failpoint ``hang``, pause
    it, then heal the failpoint (the process sees that when it wakes).

    A frozen consumer can take a message with it: a Celery worker on Redis
    that froze with a BRPOP pending gets the next message into its socket,
    out of the queue and out of the unacked set, until it is resumed. A
    scenario's wait for a rescue allows for the app's next way back (the
    broker's visibility window for a message the frozen worker holds).
    """

    name = "pause_service"

    def __init__(self, service: str, defence_off: bool = False):
        super().__init__()
        self.service = p.text(service, "service", self.name)
        if defence_off not in (True, False):
            raise self.error(f"defence_off must be True or False, got {defence_off!r}")
        # a defence (a sweeper) switched off: its effect is the passes that did not run
        self.defence_off = defence_off
        self._target: ProcessService | None = None

    def params(self) -> dict[str, Any]:
        return {"service": self.service, **({"defence_off": True} if self.defence_off else {})}

    def _inject(self) -> dict[str, Any]:
        target = resolve_service(self.run, self.service, self.name)
        if not target.is_running():
            raise self.error(f"{self.service} is not running")
        pid = target.pid
        assert pid is not None  # a running process has one
        tree = process_tree(pid)  # who is frozen: a call made by one of them was held
        self._watch = AppLogWatch(self.run)
        target.pause()
        self._target = target
        wait_until(lambda: is_frozen(pid), timeout=EFFECT_TIMEOUT, what=f"{self.service} to be frozen")
        return {"pid": pid, "tree": tree, "role": role_of(self.run, target)}

    def _heal(self) -> dict[str, Any]:
        target, self._target = self._target, None
        if target is None:
            return {}
        felt = self._watch.evidence(STALL_ERRORS)  # before the resume: what was felt while frozen
        frozen = target.pid is not None and is_frozen(target.pid)  # still frozen: nothing of it ran in the window
        target.resume()
        return {**felt, "frozen_until_heal": frozen}


class StopService(Fault):
    """Stop a service, app process or worker (SIGTERM, then SIGKILL after its grace); heal starts it again.

    The way to switch a defence off (a sweeper) for a whole scenario: the
    history shows when it went and came back, and the landing rule holds
    that it was still stopped at the heal. A scenario whose story needs the
    defence off until the verdict settles within its own body
    (``jobquake(settle=False)`` and ``jq.settle(...)``), since the heal
    comes before the harness's own settle.
    """

    name = "stop_service"

    def __init__(self, service: str):
        super().__init__()
        self.service = p.text(service, "service", self.name)
        self._target: ProcessService | None = None

    def params(self) -> dict[str, Any]:
        return {"service": self.service}

    def _inject(self) -> dict[str, Any]:
        target = resolve_service(self.run, self.service, self.name)
        if not target.is_running():
            raise self.error(f"{self.service} is not running")
        pid = target.pid
        target.stop()
        self._target = target
        return {"pid": pid, "role": role_of(self.run, target)}

    def _heal(self) -> dict[str, Any]:
        target, self._target = self._target, None
        if target is None:
            return {}
        stopped = not target.is_running()  # nothing of it ran in the window
        if stopped:
            target.start()  # returns once the service says it is ready
        return {"stopped_until_heal": stopped, "pid": target.pid}


class BrokerOutage(Fault):
    """Stop Redis (clients are refused), now or at moment ``when``; heal starts it again, empty, on the same port.

    ``when``: ``Now()`` (the default; the record's ``waiting`` says how many
    messages no worker had taken yet were lost); ``Queued(job_id)``, once a
    message (of that job) waits in the broker, so the outage certainly loses
    one;
    ``InFlight(job_id, step)`` / ``AtFailpoint(name, match)``, while the
    paid API holds that call (``InFlight()``: any job's) / the app waits at that failpoint, both let go
    only at the heal, once the broker is back. A deferred outage is armed by
    ``inject()`` and happens from a thread; ``wait()`` returns its record.
    """

    name = "broker_outage"

    def __init__(self, when: When | dict[str, Any] | str | None = None):
        super().__init__()
        self.when: When = parse_when(when, fault=self.name)
        self.outage: dict[str, Any] | None = None  # what the outage did, once it happened
        self._cancelled = threading.Event()
        self._settled = threading.Event()  # the outage happened, failed, or was called off
        self._thread: threading.Thread | None = None

    def params(self) -> dict[str, Any]:
        # an outage "now" keeps the spec it always had: {"fault": "broker_outage"}
        return {} if self.when.immediate else {"when": self.when.spec()}

    def _inject(self) -> Any:
        # a deferred outage needs the broker only at its moment (it may be coming back from another now)
        if self.when.immediate and not self.run.stack.redis.is_running():
            raise self.error("redis is not running")
        self.outage, self.failure = None, None
        self._cancelled.clear()
        self._settled.clear()
        if self.when.immediate:
            self.outage = self._stop()
            self._settled.set()
            return self.outage
        self.when.arm(self.run, self.name, hang=True)  # a held call / failpoint waits out the outage
        self._thread = threading.Thread(target=self._stop_later, name=f"fault {self.name}", daemon=True)
        self._thread.start()
        return DEFERRED

    def _stop(self) -> dict[str, Any]:
        service = self.run.stack.redis
        if not service.is_running():
            raise self.error("redis is not running")
        pid = service.pid
        # what the outage certainly takes with it (read just before): messages no worker had taken
        held = waiting_messages(self.run) if self.when.immediate else {}
        self._watch = AppLogWatch(self.run)
        stopped_t = time.monotonic()  # (monotonic) every message it held is lost from here
        service.stop()
        if not _refused(lambda: _ping(service)):
            raise self.error(f"redis on port {service.port} still answers after stop")
        return {"pid": pid, "port": service.port, "stopped_t": stopped_t,
                **({"waiting": sum(held.values())} if held else {})}

    def _stop_later(self) -> None:
        try:
            moment = wait_for_moment(self, self.when, self._cancelled)
            if moment is None:
                return
            self.outage = {**moment, **self._stop()}
            self.record("ok", v.INJECT, **self.outage)
        except Exception as exc:  # noqa: BLE001 - reported by wait() and heal_all()
            self.failure = exc if isinstance(exc, FaultError) else self.error(f"{type(exc).__name__}: {exc}")
            self.record("fail", v.INJECT, error=str(self.failure))
        finally:
            self._settled.set()

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        """Block until the outage happened; its record (``pid``, ``port``, the moment's details).

        ``FaultWaitTimeout`` when it has not within ``timeout`` (default: the
        moment's own bound plus a margin); ``FaultError`` when it failed or
        was healed before its moment came.
        """
        bound = self.when.timeout + EFFECT_TIMEOUT if timeout is None else timeout
        if not self._settled.wait(bound):
            raise FaultWaitTimeout(f"the outage did not happen within {bound:g}s (moment {self.when.spec()!r})",
                                   fault=self.name, seen={"when": self.when.spec()})
        if self.failure is not None:
            raise self.failure
        if self.outage is None:
            raise self.error("healed before the moment came: the broker stayed up")
        return dict(self.outage)

    def _heal(self) -> dict[str, Any]:
        self._cancelled.set()
        if self._thread is not None:
            self._thread.join(EFFECT_TIMEOUT + 30)
            self._thread = None
        try:
            if self.outage is None:
                return {"fired": False}
            # read before the broker is back: what the app logged while it was gone
            felt = self._watch.evidence(BROKER_ERRORS) if getattr(self, "_watch", None) else {}
            service = self.run.stack.redis
            if not service.is_running():
                service.start()
            return {"pid": service.pid, "port": service.port, **felt}
        finally:
            self.when.disarm(self.run)  # the held call / failpoint goes on, the broker back


class DatabaseRestart(Fault):
    """Restart Postgres (sessions cut, data kept), down ``down_for`` s (0: at once); heal makes sure it is up.

    A fast restart is over in tens of ms: a pool that pre-pings reconnects
    unseen, and only a statement caught in that window fails, so whether a
    periodic writer (a heartbeat) meets an error is left to timing.
    ``down_for`` keeps Postgres stopped that long: every connection
    attempt in the window is refused, so a writer whose period is shorter
    certainly meets one.
    """

    name = "database_restart"

    def __init__(self, down_for: float = 0.0):
        super().__init__()
        self.down_for = 0.0 if down_for == 0 else p.positive_number(down_for, "down_for", self.name)

    def params(self) -> dict[str, Any]:
        return {"down_for": self.down_for} if self.down_for else {}

    def _inject(self) -> dict[str, Any]:
        service = self.run.stack.postgres
        if not service.is_running():
            raise self.error("postgres is not running")
        old = service.pid
        self._watch = AppLogWatch(self.run)
        service.stop()
        if self.down_for:
            time.sleep(self.down_for)  # the outage itself, as asked: not a wait for anything to happen
        # not start(): its after_ready() recreates the app database, and a restart keeps data
        service.spawn()
        service.wait_ready()
        return {"old_pid": old, "pid": service.pid}

    def _heal(self) -> dict[str, Any]:
        service = self.run.stack.postgres
        if not service.is_running():
            service.spawn()
            service.wait_ready()
        # what the app logged since the stop: the evidence that it saw the database go
        felt = self._watch.evidence(DATABASE_GONE) if getattr(self, "_watch", None) else {}
        return {"pid": service.pid, **felt}


def _refused(attempt: Any) -> bool:
    """True once ``attempt()`` fails to connect (polled briefly: a socket may linger)."""

    def refused() -> bool:
        try:
            attempt()
        except (redis.ConnectionError, psycopg.OperationalError, OSError):
            return True
        return False

    try:
        return wait_until(refused, timeout=EFFECT_TIMEOUT, what="connections refused")
    except WaitTimeout:
        return False


def _ping(service: Any) -> None:
    with service.client() as conn:
        conn.ping()
