"""``Failpoint``: arm any failpoint as a fault; ``ExhaustPool``: the pool-exhausting one.

Arming is immediate; the app fires the failpoint whenever it reaches the
seam. ``wait()`` blocks until it has and returns the triggers
(``FaultWaitTimeout``, a ``WaitTimeout``, when it has not within the
bound), so a scenario can be sure its fault took place. Heal disarms the
failpoint, which lets go any caller it holds.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.errors import FaultError, FaultWaitTimeout, WaitTimeout
from harness.faults import _params as p
from harness.faults.base import Fault

if TYPE_CHECKING:
    from harness.failpoints.control import Armed

__all__ = ["DEFAULT_TRIGGER_TIMEOUT", "ExhaustPool", "Failpoint"]

DEFAULT_TRIGGER_TIMEOUT = 30.0  # seconds
# why a failpoint may never fire although the app did its work: said when a wait on it times out
NOT_REACHED = {name: ": Django reaches it only through a transaction (atomic(), ATOMIC_REQUESTS) or an on_commit "
                     "callback, and autocommit writes do not pass through commit hooks (django.after_write "
                     "fires after one)" for name in ("django.before_commit", "django.on_commit")}


class Failpoint(Fault):
    """Arm failpoint ``at`` with ``action`` (and its params, conditions, ``match``)."""

    name = "failpoint"

    def __init__(self, at: str, action: str, *, once: bool = False, times: int | None = None,
                 probability: float | None = None, match: dict[str, Any] | None = None, **params: Any):
        super().__init__()
        self.at = p.text(at, "at", self.name)
        self.action = p.text(action, "action", self.name)
        self.once = bool(once)
        self.times = times
        self.probability = probability
        self.match = p.string_dict(match, "match", self.name)
        self.action_params = dict(params)
        self._armed: Armed | None = None
        self._check()

    def _check(self) -> None:
        """Validate the arming now, so a bad spec fails where it is written, not at inject."""
        from harness.failpoints._validate import validated

        validated(self.at, self.action, once=self.once, times=self.times, probability=self.probability,
                  seed=0, match=self.match, params=self.action_params)

    def params(self) -> dict[str, Any]:
        conditions = {"once": self.once, "times": self.times, "probability": self.probability,
                      "match": self.match}
        return {"at": self.at, "action": self.action,
                **{k: val for k, val in conditions.items() if val not in (None, False)}, **self.action_params}

    def _inject(self) -> dict[str, Any]:
        self._armed = self.run.failpoints.arm(
            self.at, self.action, once=self.once, times=self.times, probability=self.probability,
            seed=self.run.seed, match=self.match, **self.action_params)
        return {"arm": self._armed.arm}

    def _heal(self) -> dict[str, Any]:
        armed, self._armed = self._armed, None
        if armed is None:
            return {}
        fired = len(armed.triggers())
        armed.heal()  # lets go every caller a hang / exhaust_pool holds
        return {"fired": fired}

    def triggers(self) -> list[dict[str, Any]]:
        """Every firing of this arming so far."""
        return [] if self._armed is None else self._armed.triggers()

    def wait(self, timeout: float | None = None, count: int = 1) -> list[dict[str, Any]]:
        """Block until the failpoint fired ``count`` times; its triggers.

        ``FaultWaitTimeout`` (``seen``: the triggers so far) when it did not
        within ``timeout`` (default 30 s); ``FaultError`` when a firing failed.
        """
        if self._armed is None:
            raise self.error("not armed: inject it first")
        bound = DEFAULT_TRIGGER_TIMEOUT if timeout is None else timeout
        try:
            return self._armed.wait(bound, count)
        except WaitTimeout as exc:
            raise FaultWaitTimeout(f"failpoint {self.at!r} (match {self.match!r}) did not fire {count} "
                                   f"time(s) within {bound:g}s{NOT_REACHED.get(self.at, '')}", fault=self.name,
                                   seen=self._armed.triggers()) from exc
        except FaultError as exc:
            raise self.error(str(exc)) from exc


class ExhaustPool(Failpoint):
    """In-process: when the app reaches ``at``, check out every connection of its pool and hold them.

    The app's next checkout waits ``pool_timeout`` and raises SQLAlchemy's
    ``TimeoutError`` ("QueuePool limit ... reached"). The pool must be
    registered in the app as failpoint resource ``resource`` (default
    ``db_engine``). Heal gives the connections back.
    """

    name = "exhaust_pool"

    def __init__(self, at: str, resource: str = "db_engine", match: dict[str, Any] | None = None,
                 times: int | None = 1, timeout: float | None = None):
        params: dict[str, Any] = {"resource": p.text(resource, "resource", "exhaust_pool")}
        if timeout is not None:
            params["timeout"] = timeout
        super().__init__(at, "exhaust_pool", times=times, match=match, **params)
        self.resource = resource
        self.hold_timeout = timeout

    def params(self) -> dict[str, Any]:
        return {"at": self.at, "resource": self.resource, "match": self.match, "times": self.times,
                "timeout": self.hold_timeout}
