"""Faults by name, so a fault and its parameters can live in config and be replayed from a seed.

    make_fault("kill_worker", when={"in_flight": {"job_id": "x"}})
    from_spec({"fault": "hang_endpoint", "layer": "network"})
    from_spec(fault.spec())          # the same fault again

``FAULTS`` is what the fault classes registered (``Fault.__init_subclass__``)
once their modules are imported, here. Unknown names and bad parameters
raise ``FaultError`` naming the fault.
"""
from __future__ import annotations

import inspect
from typing import Any, Mapping

# each module registers its faults as its classes are defined, in this order
from harness.faults import workers, services, network, provider, failpoint, database, client  # noqa: F401,I001
from harness.errors import FaultError
from harness.faults.base import REGISTRY, Fault

__all__ = ["FAULTS", "from_spec", "make_fault", "summary", "table"]

FAULTS: Mapping[str, type[Fault]] = REGISTRY


def make_fault(name: str, /, **params: Any) -> Fault:
    """The fault registered as ``name``, built from ``params``."""
    cls = FAULTS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise FaultError(f"unknown fault; known: {', '.join(sorted(FAULTS))}", fault=str(name))
    try:
        inspect.signature(cls).bind(**params)
    except TypeError as exc:
        raise FaultError(f"bad parameters {sorted(params)}: {exc}; signature: {name}"
                         f"{inspect.signature(cls)}", fault=name) from None
    try:
        return cls(**params)
    except FaultError as exc:
        if exc.fault == name:
            raise
        raise FaultError(str(exc), fault=name) from exc
    except (TypeError, ValueError) as exc:
        raise FaultError(f"bad parameters: {exc}", fault=name) from exc


def from_spec(spec: Mapping[str, Any]) -> Fault:
    """A fault from ``{"fault": name, **params}`` (what ``Fault.spec()`` returns)."""
    if not isinstance(spec, Mapping) or "fault" not in spec:
        raise FaultError(f"a fault spec is a mapping with a 'fault' key, got {spec!r}", fault="?")
    params = dict(spec)
    return make_fault(params.pop("fault"), **params)


def summary(cls: type[Fault]) -> str:
    """The first line of a fault class's docstring: what it does."""
    return (inspect.getdoc(cls) or "").split("\n", 1)[0].strip().replace("``", "`")


def table() -> str:
    """Every registered fault and what it does, as a Markdown table (docs/reference/faults.md's, ``Faults``' docstring)."""
    rows = [f"| `jq.faults.{name}({_first(cls)})` | {summary(cls)} |" for name, cls in FAULTS.items()]
    return "\n".join(["| fault | what it does |", "|---|---|", *rows])


def _first(cls: type[Fault]) -> str:
    """The fault's first parameter (what it acts on, by the argument rule), then ``...`` if there are more."""
    params = list(inspect.signature(cls).parameters.values())
    if not params:
        return ""
    return params[0].name + (", ..." if len(params) > 1 else "")
