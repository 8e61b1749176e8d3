"""The ``exhaust_pool`` action: check out every connection of a pool and hold them.

The failpoint call returns as soon as the pool is empty, so the app's next
checkout waits ``pool_timeout`` and raises ``sqlalchemy.exc.TimeoutError``
("QueuePool limit ... reached"), exactly as under real load. A daemon thread
holds the connections until the harness releases or disarms the failpoint
(or the arming's ``timeout`` passes) and then gives them back. A resource
with a ``jobquake_exhaust()`` method empties itself (the instrumentation's
adapter for Django's connections, ``harness.instrument._django``).
"""
from __future__ import annotations

import threading
from typing import Any

from harness.failpoints._state import ClientState
from harness.failpoints.spec import Spec


# a resource that empties itself (another framework's connections): ``obj.jobquake_exhaust()`` returns
# how many connections it holds and the function that gives them back
EXHAUST_HOOK = "jobquake_exhaust"


def bounded_pool(obj: Any) -> Any:
    """The QueuePool of an Engine (or the pool itself); TypeError if it has no fixed capacity."""
    if callable(getattr(obj, EXHAUST_HOOK, None)):
        return obj
    pool = getattr(obj, "pool", obj)
    if not all(hasattr(pool, attr) for attr in ("connect", "checkedout", "size", "_max_overflow")):
        raise TypeError(f"{type(obj).__name__} is neither a SQLAlchemy Engine nor a QueuePool")
    if pool._max_overflow < 0:
        raise TypeError("the pool has no limit (pool_size=0 or max_overflow=-1): it cannot be exhausted")
    return pool


def capacity(pool: Any) -> int:
    return pool.size() + pool._max_overflow


def exhaust(client: ClientState, spec: Spec, pool: Any) -> int:
    """Check out connections until the pool is at capacity; returns how many this call holds."""
    if callable(getattr(pool, EXHAUST_HOOK, None)):
        count, give_back = getattr(pool, EXHAUST_HOOK)()
        _hold(client, spec, give_back, f"{count} connections")
        return count
    held = []
    try:
        while pool.checkedout() < capacity(pool):
            held.append(pool.connect())
    except BaseException:
        _give_back(held)
        raise
    _hold(client, spec, lambda: _give_back(held), f"{len(held)} connections")
    return len(held)


def _hold(client: ClientState, spec: Spec, give_back: Any, what: str) -> None:
    """Give back what is held once the harness releases the failpoint (or its timeout passes)."""
    holder = threading.Thread(target=_hold_until_released, args=(client, spec, give_back, spec.params.get("timeout")),
                              name=f"failpoint {spec.name}: holding {what}", daemon=True)
    holder.start()


def _hold_until_released(client: ClientState, spec: Spec, give_back: Any, timeout: float | None) -> None:
    try:
        client.wait_released(spec, timeout)
    finally:
        give_back()


def _give_back(held: list[Any]) -> None:
    for connection in held:
        try:
            connection.close()
        except Exception:  # noqa: BLE001 - a dead connection is simply dropped by the pool
            pass
