"""``Faults``: the faults of one run, as a scenario reaches them through ``jq.faults``.

There is one method per registered fault, named as the fault, taking the
fault class's own parameters; each builds the fault, injects it and
returns it::

    kill = jq.faults.kill_worker(when=InFlight("job-1"))
    submit(jq, "job-1")
    kill.wait()

Each method is one line of ``Faults``' body, ``kill_worker =
FaultMethod(KillWorker)``: the fault class's ``__init__`` is the only place
its parameters are written. ``FaultMethod`` carries that signature to type
checkers and IDEs (a ``ParamSpec``), so ``jq.faults.kill_worker(`` completes
with the real parameters and mypy refuses a misspelt fault or keyword; at
run time ``help(jq.faults)`` and ``inspect.signature`` show the same.
A fault class registered without its line here fails
tests/unit/test_faults_registry.py, and an unknown ``jq.faults.<name>``
raises an ``AttributeError`` listing the faults there are.

Every injected fault is tracked; ``heal_all()`` heals them, newest first,
before the run is judged and again at teardown (like the final generator
of a Jepsen test: heal, then check). One heal that fails does not stop the
others: each failure is recorded in the history and reported.
"""
from __future__ import annotations

import difflib
import inspect
import types
import warnings
from typing import TYPE_CHECKING, Any, Callable, Concatenate, Generic, Iterator, Mapping, ParamSpec, TypeVar, overload

from harness.errors import FaultError
from harness.faults.base import Fault
from harness.faults.client import DuplicateSubmission
from harness.faults.database import HoldDatabaseConnections, PoisonRow
from harness.faults.failpoint import ExhaustPool, Failpoint
from harness.faults.network import HangEndpoint, NetworkToxic, ProxyDown
from harness.faults.provider import PaidAPIMode
from harness.faults.registry import FAULTS, from_spec, table
from harness.faults.services import BrokerOutage, DatabaseRestart, PauseService, StopService
from harness.faults.workers import KillWorker

if TYPE_CHECKING:
    from harness.faults.target import RunTarget

__all__ = ["FaultHealWarning", "FaultMethod", "Faults"]

F = TypeVar("F", bound=Fault)
P = ParamSpec("P")


class FaultHealWarning(UserWarning):
    """A fault could not be healed, or its deferred injection failed, at teardown."""


def _method(cls: type[Fault]) -> Callable[..., Any]:
    """The function behind ``Faults.<cls.name>``, with the class's signature and docstring for ``help()``."""

    def inject_fault(self: Faults, *args: Any, **kwargs: Any) -> Fault:
        return self.inject(cls(*args, **kwargs))

    signature = inspect.signature(cls)
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    inject_fault.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_param, *signature.parameters.values()], return_annotation=cls.__name__)
    inject_fault.__name__ = cls.name
    inject_fault.__qualname__ = f"Faults.{cls.name}"
    inject_fault.__module__ = __name__
    inject_fault.__doc__ = f"Inject :class:`{cls.__name__}` and return it.\n\n{inspect.getdoc(cls) or ''}"
    return inject_fault


class FaultMethod(Generic[P, F]):
    """``jq.faults.<name>(...)``: build the fault class ``cls`` from the call's arguments, inject it, return it.

    Typed with ``cls``'s own parameters (``P``) and the class it returns
    (``F``); the attribute's name must be the fault's registered name.
    """

    def __init__(self, cls: Callable[P, F]) -> None:
        if not (isinstance(cls, type) and issubclass(cls, Fault)):
            raise TypeError(f"FaultMethod takes a Fault class, got {cls!r}")
        self.cls: type[Fault] = cls
        self.function = _method(cls)

    def __set_name__(self, owner: type, name: str) -> None:
        if name != self.cls.name:
            raise TypeError(f"{owner.__name__}.{name} injects {self.cls.__name__}, which is registered as "
                            f"{self.cls.name!r}: name the method as the fault")

    @overload
    def __get__(self, faults: None, owner: type) -> Callable[Concatenate[Faults, P], F]: ...
    @overload
    def __get__(self, faults: Faults, owner: type) -> Callable[P, F]: ...

    def __get__(self, faults: Faults | None, owner: type) -> Callable[..., F]:
        if faults is None:  # Faults.kill_worker: the plain function (help(), the docs)
            return self.function
        return types.MethodType(self.function, faults)


class Faults:
    """The faults injected in one run (one method per fault: see the table below)."""

    # one line per registered fault, in the registry's order (tests/unit/test_faults_registry.py)
    kill_worker = FaultMethod(KillWorker)
    pause_service = FaultMethod(PauseService)
    stop_service = FaultMethod(StopService)
    broker_outage = FaultMethod(BrokerOutage)
    database_restart = FaultMethod(DatabaseRestart)
    hang_endpoint = FaultMethod(HangEndpoint)
    network_toxic = FaultMethod(NetworkToxic)
    proxy_down = FaultMethod(ProxyDown)
    paidapi_mode = FaultMethod(PaidAPIMode)
    failpoint = FaultMethod(Failpoint)
    exhaust_pool = FaultMethod(ExhaustPool)
    hold_database_connections = FaultMethod(HoldDatabaseConnections)
    poison_row = FaultMethod(PoisonRow)
    duplicate_submission = FaultMethod(DuplicateSubmission)

    def __init__(self, run: RunTarget):
        self.run = run
        self.injected: list[Fault] = []
        self.errors: list[FaultError] = []
        self._kept: list[Fault] = []  # healed at teardown only, after the verdict

    def inject(self, fault: F) -> F:
        """Bind ``fault`` to this run, track it, inject it; returns it."""
        fault.bind(self.run)
        if fault not in self.injected:
            self.injected.append(fault)
        return fault.inject()

    def keep(self, fault: F) -> F:
        """Inject ``fault`` and keep it in place through the verdict; it is healed at teardown.

        For a fault that is the condition being judged (a call that never
        comes back): the heal before the verdict would end it and hide what
        it does. Recorded in the history like any other.
        """
        self._kept.append(fault)
        return self.inject(fault)

    def inject_spec(self, spec: Mapping[str, Any]) -> Fault:
        """Inject the fault a spec describes (``{"fault": "proxy_down", "proxy": "paidapi"}``)."""
        return self.inject(from_spec(spec))

    # -- teardown ----------------------------------------------------------------------
    def heal_all(self, *, raise_errors: bool = False, before_verdict: bool = False) -> list[FaultError]:
        """Heal every fault, newest first; the errors (also recorded, and warned about).

        ``before_verdict``: leave the faults injected with ``keep()`` in place.

        A fault whose heal failed stays injected, so a later ``heal_all()``
        tries it again. With ``raise_errors`` the errors come as one
        ``ExceptionGroup`` after every fault had its chance.
        """
        errors: list[FaultError] = []
        for fault in reversed(self.injected):
            if before_verdict and any(fault is kept for kept in self._kept):
                continue
            try:
                fault.heal()
            except FaultError as exc:
                errors.append(exc)
            except Exception as exc:  # noqa: BLE001 - one broken heal must not stop the others
                errors.append(FaultError(f"cannot heal: {type(exc).__name__}: {exc}", fault=fault.name))
            if fault.failure is not None:  # a deferred injection that never happened
                errors.append(fault.failure)
                fault.failure = None
        self.errors.extend(errors)
        for error in errors:
            warnings.warn(FaultHealWarning(str(error)), stacklevel=2)
        if errors and raise_errors:
            raise ExceptionGroup(f"{len(errors)} fault(s) failed", errors)
        return errors

    def specs(self) -> list[dict[str, Any]]:
        """The spec of every fault injected so far, oldest first: enough to replay them."""
        return [fault.spec() for fault in self.injected]

    def __iter__(self) -> Iterator[Fault]:
        return iter(self.injected)

    def __len__(self) -> int:
        return len(self.injected)

    if not TYPE_CHECKING:  # to a type checker an unknown name must stay an error, not Any
        def __getattr__(self, name: str) -> Any:
            if name.startswith("_"):
                raise AttributeError(name)
            close = difflib.get_close_matches(name, FAULTS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise AttributeError(f"jq.faults has no fault {name!r}; {hint}known: {', '.join(sorted(FAULTS))}")


Faults.__doc__ = f"{Faults.__doc__}\n\n{table()}"
