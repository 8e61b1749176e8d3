"""Objects the application lends to failpoint actions, by name.

Registering costs a dict store, so apps register unconditionally at
startup whether or not failpoints are enabled.
"""
from __future__ import annotations

from typing import Any, Callable

resources: dict[str, Any] = {}
callbacks: dict[str, Callable[..., Any]] = {}
exception_factories: dict[str, Callable[[str], BaseException]] = {}


def register_resource(name: str, obj: Any) -> None:
    """Lend ``obj`` to actions under ``name`` (``exhaust_pool`` looks up ``"db_engine"`` by default)."""
    resources[name] = obj


def register_callback(name: str, fn: Callable[..., Any]) -> None:
    """Make ``fn`` available to the ``callback`` action.

    It is called as ``fn(context, **kwargs)``: the failpoint's context dict
    and the ``kwargs`` given when arming; its result is what ``failpoint()``
    returns.
    """
    callbacks[name] = fn


def register_exception_factory(exception: str, factory: Callable[[str], BaseException]) -> None:
    """Build the exception named ``exception`` (dotted name) from the armed message.

    For exception types whose constructor does not take a single message.
    """
    exception_factories[exception] = factory
