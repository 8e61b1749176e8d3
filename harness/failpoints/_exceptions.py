"""Find an exception type by dotted name and build an instance of it from a message."""
from __future__ import annotations

import builtins
import importlib
from typing import Any

from harness.failpoints._registry import exception_factories


class InjectedFault(Exception):
    """Stands in as the driver-level cause of an injected database error."""


def resolve(dotted: str) -> type[BaseException]:
    """Return the exception class named ``dotted`` ("ValueError", "sqlalchemy.exc.OperationalError").

    Raises ModuleNotFoundError when its top-level package is not installed
    here, LookupError when the module has no such attribute, TypeError when
    the name is not an exception class.
    """
    parts = dotted.split(".")
    if len(parts) == 1:
        obj = getattr(builtins, dotted, None)
        if obj is None:
            raise LookupError(f"no builtin named {dotted!r}")
    else:
        obj = _import_attribute(parts)
    if not (isinstance(obj, type) and issubclass(obj, BaseException)):
        raise TypeError(f"{dotted!r} is not an exception class")
    return obj


def _import_attribute(parts: list[str]) -> Any:
    # the longest importable prefix is the module; the rest are attributes (Outer.Inner)
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if cut > 1 and exc.name == module_name:
                continue
            raise
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                raise LookupError(f"{module_name!r} has no attribute {'.'.join(parts[cut:])!r}") from None
        return obj
    raise AssertionError("unreachable: the first part is always tried as a module")


def build(dotted: str, message: str, args: list[Any] | None = None) -> BaseException:
    """An instance of the exception named ``dotted``.

    In order: a factory registered for the name; ``cls(*args)`` when args were
    armed; ``cls(message)``; for SQLAlchemy's DBAPI errors, which need a
    statement, params and the driver's error, ``cls(None, None, InjectedFault(message))``.
    """
    factory = exception_factories.get(dotted)
    if factory is not None:
        return factory(message)
    cls = resolve(dotted)
    if args is not None:
        return cls(*args)
    try:
        return cls(message)
    except TypeError:
        if not _is_dbapi_error(cls):
            raise TypeError(f"{dotted} cannot be built from a message alone: arm it with "
                            f"args=[...] or register an exception factory for it") from None
    return cls(None, None, InjectedFault(message))  # type: ignore[call-arg]


def _is_dbapi_error(cls: type) -> bool:
    return any(f"{k.__module__}.{k.__qualname__}" == "sqlalchemy.exc.DBAPIError" for k in cls.__mro__)
