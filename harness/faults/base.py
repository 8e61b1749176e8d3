"""``Fault``: the contract every fault keeps, and the history events it leaves.

A fault is built from plain parameters (so it can be written in config and
replayed from a seed), bound to a run, then injected and healed::

    fault = KillWorker("worker1").bind(jq)
    with fault:            # inject() on entry, heal() on exit
        ...

``inject()`` records ``fault invoke inject`` before it acts and ``fault ok
inject`` once the damage is done (or ``fault fail inject`` with the reason);
``heal()`` does the same with ``heal``. ``heal()`` is idempotent: healing a
fault that was never injected, or twice, does nothing. Anything that goes
wrong surfaces as a ``FaultError`` naming the fault.

A subclass that sets ``name`` in its own body registers itself in
``REGISTRY``: that one registration is where the list of faults comes from
(``registry.FAULTS``, the methods of ``jq.faults``, ``harness.faults``'s
exports and the faults reference page, docs/reference/faults.md).

Argument order, for every fault: the first parameter names what the fault
acts on (a service, a proxy, a failpoint, a table); how and when come after.
A service or worker is named as ``jq.stack`` names it (``"worker1"``,
``"relay"``, ``"redis"``).
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, ClassVar, Self

from harness.errors import FaultError
from harness.history import vocabulary as v

if TYPE_CHECKING:
    from harness.faults.target import RunTarget

__all__ = ["DEFERRED", "Fault", "HEALED", "INJECTED", "NEW", "REGISTRY"]

NEW, INJECTED, HEALED = "new", "injected", "healed"

# fault name -> class, filled by Fault.__init_subclass__ in the order the classes are defined
REGISTRY: dict[str, type[Fault]] = {}


class _Deferred:
    """What ``_inject`` returns when the damage comes later: "ok" is recorded when it does."""

    def __repr__(self) -> str:
        return "DEFERRED"


DEFERRED: Any = _Deferred()


class Fault:
    """Base class: subclasses set ``name`` and implement ``params``, ``_inject`` and ``_heal``."""

    name: ClassVar[str] = "fault"

    def __init_subclass__(cls, register: bool = True, **kwargs: Any) -> None:
        """Register a subclass that names itself (``register=False``: a private one, e.g. in a test)."""
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("name")
        if name is None or not register:  # a helper class: it names no fault of its own
            return
        if name in REGISTRY and REGISTRY[name] is not cls:
            raise TypeError(f"two faults named {name!r}: {REGISTRY[name].__qualname__} and {cls.__qualname__}")
        REGISTRY[name] = cls

    def __init__(self) -> None:
        self._run: RunTarget | None = None
        self._state = NEW
        self._lock = threading.RLock()
        # what went wrong outside inject()/heal(), e.g. a deferred fault whose moment never
        # came: heal_all() reports it, so a scenario cannot pass without its fault
        self.failure: FaultError | None = None

    # -- what subclasses provide -------------------------------------------------
    def params(self) -> dict[str, Any]:
        """The constructor parameters as JSON values (what ``from_spec`` takes back)."""
        return {}

    def _inject(self) -> dict[str, Any] | None:
        """Do the damage; return details for the history (pid killed, toxic name...) or DEFERRED."""
        raise NotImplementedError

    def _heal(self) -> dict[str, Any] | None:
        """Undo the damage; called once per injection."""
        raise NotImplementedError

    # -- the contract --------------------------------------------------------------
    def spec(self) -> dict[str, Any]:
        """``{"fault": name, **params}``: enough to rebuild this fault with ``from_spec``."""
        return {"fault": self.name, **self.params()}

    def bind(self, run: RunTarget) -> Self:
        """Attach the run whose stack and history this fault uses; returns self."""
        self._run = run
        return self

    @property
    def run(self) -> RunTarget:
        """The run this fault is bound to; FaultError when it is not bound yet."""
        if self._run is None:
            raise self.error("not bound to a run: call bind(jq) or use jq.faults")
        return self._run

    @property
    def injected(self) -> bool:
        """True between a successful ``inject()`` and its ``heal()``."""
        return self._state == INJECTED

    def inject(self, run: RunTarget | None = None) -> Self:
        """Inject the fault (bound to ``run`` if given); FaultError if it cannot be."""
        if run is not None:
            self.bind(run)
        with self._lock:
            if self._state == INJECTED:
                raise self.error("already injected: heal it before injecting it again")
            self.record("invoke", v.INJECT)
            try:
                details = self._inject()
            except Exception as exc:  # noqa: BLE001 - every failure becomes a FaultError
                error = self._as_fault_error(exc, "cannot inject")
                self.record("fail", v.INJECT, error=str(error))
                raise error from exc
            self._state = INJECTED
            if details is not DEFERRED:
                self.record("ok", v.INJECT, **(details or {}))
        return self

    def heal(self) -> None:
        """Undo the fault. Idempotent; FaultError if the undoing failed (it may be retried)."""
        with self._lock:
            if self._state != INJECTED:
                return
            self.record("invoke", v.HEAL)
            try:
                details = self._heal() or {}
            except Exception as exc:  # noqa: BLE001
                error = self._as_fault_error(exc, "cannot heal")
                self.record("fail", v.HEAL, error=str(error))
                raise error from exc
            self._state = HEALED
            self.record("ok", v.HEAL, **details)

    def __enter__(self) -> Self:
        if self._state != INJECTED:
            self.inject()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.heal()

    # -- helpers for subclasses --------------------------------------------------
    def record(self, type_: str, event: str, **details: Any) -> None:
        """Append a ``fault`` event (``data``: fault name, params, details) to the history."""
        data = {"fault": self.name, "params": self.params(), **details}
        job_id = details.get("job_id")  # the job its trigger named (a held call's): in that job's timeline
        self.run.history.record(v.FAULT, type_, event, job_id=None if job_id is None else str(job_id), data=data)

    def error(self, message: str) -> FaultError:
        """A FaultError naming this fault."""
        return FaultError(message, fault=self.name)

    def _as_fault_error(self, exc: Exception, doing: str) -> FaultError:
        if isinstance(exc, FaultError):
            if exc.fault == self.name:
                return exc
            return self.error(f"{doing}: {exc}")
        return self.error(f"{doing}: {type(exc).__name__}: {exc}")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={val!r}" for k, val in self.params().items())
        return f"{type(self).__name__}({args})"
