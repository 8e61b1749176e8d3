"""What a firing failpoint does.

Each action is split in two: ``prepare`` looks up everything the action
needs (exception class, registered resource or callback) and fails with a
FaultError if the app lacks it; the firing is recorded after that and
before the returned runner executes, so a ``kill`` or ``hang`` is on record
before it happens.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Any, Callable

from harness.errors import FaultError
from harness.failpoints import _exceptions, _pool, _registry
from harness.failpoints._state import ClientState
from harness.failpoints.spec import DEFAULT_POOL_RESOURCE, Spec

Runner = Callable[[], Any]


def prepare(client: ClientState, spec: Spec, context: dict[str, Any]) -> Runner:
    """A zero-argument runner for the action of ``spec``; FaultError if it cannot run here."""
    builder = _BUILDERS.get(spec.action)
    if builder is None:
        raise FaultError(f"unknown action {spec.action!r}", fault=spec.name)
    try:
        return builder(client, spec, context)
    except FaultError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, name the failpoint
        raise FaultError(f"action {spec.action!r} cannot run: {exc}", fault=spec.name) from exc


def _raise(client: ClientState, spec: Spec, context: dict[str, Any]) -> Runner:
    params = spec.params
    message = params.get("message") or f"injected by failpoint {spec.name}"
    exc = _exceptions.build(params["exception"], message, params.get("args"))
    exc.add_note(f"injected by failpoint {spec.name!r} (context {context!r})")

    def run() -> Any:
        raise exc

    return run


def _sleep(client: ClientState, spec: Spec, context: dict[str, Any]) -> Runner:
    seconds = spec.params["seconds"]
    return lambda: time.sleep(seconds)


def _hang(client: ClientState, spec: Spec, context: dict[str, Any]) -> Runner:
    timeout = spec.params.get("timeout")

    def run() -> None:
        client.wait_released(spec, timeout)

    return run


def _kill(client: ClientState, spec: Spec, context: dict[str, Any]) -> Runner:
    group = bool(spec.params.get("group"))

    def run() -> Any:
        if group:
            os.killpg(os.getpgrp(), signal.SIGKILL)
        else:
            os.kill(os.getpid(), signal.SIGKILL)
        while True:  # SIGKILL to ourselves is not handled in user space; never return
            time.sleep(1)

    return run


def _exhaust_pool(client: ClientState, spec: Spec, context: dict[str, Any]) -> Runner:
    name = spec.params.get("resource", DEFAULT_POOL_RESOURCE)
    if name not in _registry.resources:
        raise FaultError(f"no resource registered as {name!r}: call "
                         f"register_resource({name!r}, engine) at app startup", fault=spec.name)
    pool = _pool.bounded_pool(_registry.resources[name])

    def run() -> None:
        _pool.exhaust(client, spec, pool)

    return run


def _callback(client: ClientState, spec: Spec, context: dict[str, Any]) -> Runner:
    name = spec.params["callback"]
    fn = _registry.callbacks.get(name)
    if fn is None:
        raise FaultError(f"no callback registered as {name!r}: call "
                         f"register_callback({name!r}, fn) at app startup", fault=spec.name)
    kwargs = spec.params.get("kwargs") or {}
    return lambda: fn(dict(context), **kwargs)


def _return(client: ClientState, spec: Spec, context: dict[str, Any]) -> Runner:
    value = spec.params.get("value")
    return lambda: value


_BUILDERS: dict[str, Callable[[ClientState, Spec, dict[str, Any]], Runner]] = {
    "raise": _raise,
    "sleep": _sleep,
    "hang": _hang,
    "kill": _kill,
    "exhaust_pool": _exhaust_pool,
    "callback": _callback,
    "return": _return,
}
