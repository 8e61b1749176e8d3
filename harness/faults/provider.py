"""``PaidAPIMode``: the paid API misbehaves (slow or failing answers), as a recorded, healed fault.

The provider's mode rules (``harness.paidapi.modes``) behind a fault: the
history shows when the provider turned slow or failing and when it came
back, and the landing rule holds that at least one paid call was answered
in that mode. Hanging calls are ``hang_endpoint``'s (it also tells the
provider's hang from the network's).
"""
from __future__ import annotations

from typing import Any

from harness.faults import _params as p
from harness.faults.base import Fault

__all__ = ["MODES", "PaidAPIMode"]

MODES = ("slow", "fail")


class PaidAPIMode(Fault):
    """Every matching paid call is answered in ``mode``: ``slow`` (``seconds`` / ``factor``) or ``fail``.

    ``job_id`` / ``route`` narrow the calls it takes (default: every call),
    ``count`` limits it to the next N calls; ``status`` is a failing
    answer's HTTP status (default 500); ``seconds`` are production seconds,
    scaled by the run's time scale like every latency. Heal removes the rule.
    """

    name = "paidapi_mode"

    def __init__(self, mode: str, job_id: str | None = None, route: str | None = None, *,
                 seconds: float | None = None, factor: float | None = None, status: int | None = None,
                 count: int | None = None, immediate: bool = True):
        super().__init__()
        if mode not in MODES:
            hint = " (hanging calls: use hang_endpoint)" if str(mode).startswith("hang") else ""
            raise self.error(f"mode must be one of {MODES}, got {mode!r}{hint}")
        if mode == "slow" and (seconds is None) == (factor is None):
            raise self.error("a slow mode takes seconds=... or factor=... (one of them)")
        if mode == "fail" and (seconds is not None or factor is not None):
            raise self.error("a fail mode takes status=... (not seconds or factor)")
        self.mode = mode
        self.job_id = p.text(job_id, "job_id", self.name, optional=True)
        self.route = p.text(route, "route", self.name, optional=True)
        self.seconds = None if seconds is None else p.positive_number(seconds, "seconds", self.name)
        self.factor = None if factor is None else p.positive_number(factor, "factor", self.name)
        self.status = status
        self.count = count
        self.immediate = bool(immediate)
        self._rule: Any = None

    def params(self) -> dict[str, Any]:
        given = {"job_id": self.job_id, "route": self.route, "seconds": self.seconds, "factor": self.factor,
                 "status": self.status, "count": self.count}
        return {"mode": self.mode, **{k: val for k, val in given.items() if val is not None},
                **({} if self.immediate else {"immediate": False})}

    def _inject(self) -> dict[str, Any]:
        self._rule = self.run.paidapi.set_mode(
            self.mode, job_id=self.job_id, route=self.route, seconds=self.seconds, factor=self.factor,
            status=self.status, count=self.count, immediate=self.immediate)
        return {"rule_id": self._rule.rule_id}

    def _heal(self) -> dict[str, Any]:
        rule, self._rule = self._rule, None
        if rule is not None:
            rule.heal()
        return {}
