"""``Faults``: the faults of one run, as a scenario reaches them through ``jq.faults``.

Each method builds a fault, injects it and returns it::

    kill = jq.faults.kill_worker(when=InFlight("job-1"))
    submit(jq, "job-1")
    kill.wait()

Every injected fault is tracked; ``heal_all()`` heals them, newest first,
before the run is judged and again at teardown (like the final generator
of a Jepsen test: heal, then check). One heal that fails does not stop the
others: each failure is recorded in the history and reported.
"""
from __future__ import annotations

import signal
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, TypeVar

from harness.errors import FaultError
from harness.faults.base import Fault
from harness.faults.client import DuplicateSubmission
from harness.faults.database import HoldDatabaseConnections, PoisonRow
from harness.faults.failpoint import ExhaustPool, Failpoint
from harness.faults.network import HangEndpoint, NetworkToxic, ProxyDown
from harness.faults.registry import from_spec
from harness.faults.services import BrokerOutage, DatabaseRestart, PauseService
from harness.faults.workers import KillWorker

if TYPE_CHECKING:
    from harness.run import Run

F = TypeVar("F", bound=Fault)


class FaultHealWarning(UserWarning):
    """A fault could not be healed, or its deferred injection failed, at teardown."""


class Faults:
    """The faults injected in one run."""

    def __init__(self, run: Run):
        self.run = run
        self.injected: list[Fault] = []
        self.errors: list[FaultError] = []

    def inject(self, fault: F) -> F:
        """Bind ``fault`` to this run, track it, inject it; returns it."""
        fault.bind(self.run)
        if fault not in self.injected:
            self.injected.append(fault)
        return fault.inject()

    def inject_spec(self, spec: Mapping[str, Any]) -> Fault:
        """Inject the fault a spec describes (``{"fault": "proxy_down", "proxy": "paidapi"}``)."""
        return self.inject(from_spec(spec))

    # -- one method per fault ------------------------------------------------------
    def kill_worker(self, index: int = 0, signal: Any = signal.SIGKILL, when: Any = None,
                    replace: bool = True, group: bool | None = None) -> KillWorker:
        return self.inject(KillWorker(index, signal=signal, when=when, replace=replace, group=group))

    def pause_service(self, service: str) -> PauseService:
        return self.inject(PauseService(service))

    def hang_endpoint(self, layer: str = "provider", job_id: str | None = None, route: str | None = None,
                      proxy: str = "paidapi", stream: str = "downstream",
                      mid_stream: bool = False) -> HangEndpoint:
        return self.inject(HangEndpoint(layer, job_id=job_id, route=route, proxy=proxy, stream=stream,
                                        mid_stream=mid_stream))

    def network_toxic(self, proxy: str, type: str, stream: str = "downstream", toxicity: float = 1.0,
                      name: str | None = None, **attributes: int) -> NetworkToxic:
        return self.inject(NetworkToxic(proxy, type, stream=stream, toxicity=toxicity, name=name,
                                        **attributes))

    def proxy_down(self, proxy: str = "paidapi") -> ProxyDown:
        return self.inject(ProxyDown(proxy))

    def exhaust_pool(self, at: str, resource: str = "db_engine", match: dict[str, Any] | None = None,
                     times: int | None = 1, timeout: float | None = None) -> ExhaustPool:
        return self.inject(ExhaustPool(at, resource=resource, match=match, times=times, timeout=timeout))

    def hold_database_connections(self) -> HoldDatabaseConnections:
        return self.inject(HoldDatabaseConnections())

    def poison_row(self, table: str, values: dict[str, Any] | None = None,
                   insert: Callable[..., dict[str, Any]] | str | None = None,
                   key: list[str] | None = None) -> PoisonRow:
        return self.inject(PoisonRow(table, values=values, insert=insert, key=key))

    def broker_outage(self) -> BrokerOutage:
        return self.inject(BrokerOutage())

    def database_restart(self) -> DatabaseRestart:
        return self.inject(DatabaseRestart())

    def duplicate_submission(self, submit: Callable[[], Any] | str, times: int = 2) -> DuplicateSubmission:
        return self.inject(DuplicateSubmission(submit, times=times))

    def failpoint(self, at: str, action: str, **params: Any) -> Failpoint:
        return self.inject(Failpoint(at, action, **params))

    # -- teardown ----------------------------------------------------------------------
    def heal_all(self, *, raise_errors: bool = False) -> list[FaultError]:
        """Heal every fault, newest first; the errors (also recorded, and warned about).

        A fault whose heal failed stays injected, so a later ``heal_all()``
        tries it again. With ``raise_errors`` the errors come as one
        ``ExceptionGroup`` after every fault had its chance.
        """
        errors: list[FaultError] = []
        for fault in reversed(self.injected):
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
