"""``Faults``: the faults of one run, as a scenario reaches them through ``jq.faults``.

There is one method per registered fault, named as the fault, taking the
fault class's own parameters; each builds the fault, injects it and
returns it::

    kill = jq.faults.kill_worker(when=InFlight("job-1"))
    submit(jq, "job-1")
    kill.wait()

The methods are made from the registry (``Fault`` subclasses register
themselves), so a new fault class is a new method with nothing else to
write; ``help(jq.faults)`` and interactive completion show each one's
signature and docstring.

Every injected fault is tracked; ``heal_all()`` heals them, newest first,
before the run is judged and again at teardown (like the final generator
of a Jepsen test: heal, then check). One heal that fails does not stop the
others: each failure is recorded in the history and reported.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import TYPE_CHECKING, Any, Iterator, Mapping, TypeVar

from harness.errors import FaultError
from harness.faults.base import Fault
from harness.faults.registry import FAULTS, from_spec, table

if TYPE_CHECKING:
    from harness.faults.target import RunTarget

F = TypeVar("F", bound=Fault)


class FaultHealWarning(UserWarning):
    """A fault could not be healed, or its deferred injection failed, at teardown."""


class Faults:
    """The faults injected in one run (one method per fault: see the table below)."""

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


def _method(cls: type[Fault]) -> Any:
    """``Faults.<cls.name>``: build ``cls`` from the arguments and inject it."""

    @functools.wraps(cls, assigned=("__doc__",), updated=())
    def inject_fault(self: Faults, *args: Any, **kwargs: Any) -> Fault:
        return self.inject(cls(*args, **kwargs))

    signature = inspect.signature(cls)
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    inject_fault.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_param, *signature.parameters.values()], return_annotation=cls.__name__)
    inject_fault.__name__ = inject_fault.__qualname__ = cls.name
    inject_fault.__qualname__ = f"Faults.{cls.name}"
    inject_fault.__module__ = __name__
    inject_fault.__doc__ = f"Inject :class:`{cls.__name__}` and return it.\n\n{inspect.getdoc(cls) or ''}"
    return inject_fault


for _cls in FAULTS.values():
    setattr(Faults, _cls.name, _method(_cls))
Faults.__doc__ = f"{Faults.__doc__}\n\n{table()}"
