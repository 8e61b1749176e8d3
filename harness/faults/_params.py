"""Parameter checks shared by the faults: each bad value becomes a FaultError naming the fault."""
from __future__ import annotations

import importlib
import signal
from typing import Any, Callable, Literal, cast, overload

from harness.errors import FaultError


def parse_signal(value: Any, fault: str) -> signal.Signals:
    """A signal from ``signal.SIGTERM``, ``15``, ``"SIGTERM"`` or ``"term"``."""
    try:
        if isinstance(value, str):
            name = value.upper()
            return signal.Signals[name if name.startswith("SIG") else "SIG" + name]
        if isinstance(value, int) and not isinstance(value, bool):
            return signal.Signals(value)
    except (KeyError, ValueError):
        pass
    raise FaultError(f"signal {value!r} is not a signal name or number", fault=fault)


def non_negative_int(value: Any, what: str, fault: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FaultError(f"{what} must be a non-negative int, got {value!r}", fault=fault)
    return value


def positive_number(value: Any, what: str, fault: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise FaultError(f"{what} must be a positive number, got {value!r}", fault=fault)
    return float(value)


@overload
def text(value: Any, what: str, fault: str, *, optional: Literal[False] = False) -> str: ...
@overload
def text(value: Any, what: str, fault: str, *, optional: bool) -> str | None: ...


def text(value: Any, what: str, fault: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise FaultError(f"{what} must be a non-empty string, got {value!r}", fault=fault)
    return value


def string_dict(value: Any, what: str, fault: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise FaultError(f"{what} must be a dict with string keys, got {value!r}", fault=fault)
    return dict(value)


def a_callable(value: Any, what: str, fault: str) -> Callable[..., Any]:
    """A callable, or one named ``"module:function"`` (how a spec file names it)."""
    if callable(value):
        return cast(Callable[..., Any], value)
    if isinstance(value, str) and ":" in value:
        module, _, attr = value.partition(":")
        try:
            found = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise FaultError(f"{what} = {value!r} cannot be imported: {exc}", fault=fault) from exc
        if callable(found):
            return cast(Callable[..., Any], found)
    raise FaultError(f"{what} must be a callable or 'module:function', got {value!r}", fault=fault)


def describe_callable(fn: Callable[..., Any]) -> str:
    """``module:qualname``: how a callable appears in params (re-importable when top level)."""
    module = getattr(fn, "__module__", None) or "?"
    name = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{module}:{name}"
