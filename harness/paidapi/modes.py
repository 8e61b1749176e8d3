"""Mode rules: how the fake provider misbehaves, per route and per job.

Modes:

- ``normal``: answer after the drawn latency, bill the call.
- ``hang``: read the request and never answer; nothing is generated or
  billed. The connection stays open until the rule is removed, then the
  call is answered 503 (so nothing stays open forever).
- ``hang_mid_stream``: generate, start the answer, then stall: a stream
  sends its opening events and half of the rest, a plain answer its first
  half of bytes, then nothing; nothing is billed. When the rule is removed the connection
  is cut (the client sees a broken stream) and the call recorded failed.
- ``fail``: answer ``status`` (default 500), immediately or, with
  ``immediate=False``, after the latency; never billed.
- ``slow``: the latency is multiplied by ``factor`` or replaced by
  ``seconds`` (real seconds, time-scaled like every latency).

A rule without ``route`` / ``job_id`` matches every call. The most specific
matching rule wins (a job is narrower than a route, both narrower still);
among equals the rule added last wins. ``count`` limits a rule to the next N
calls it decides; a spent rule stays listed (a spent hang rule still holds
its hung calls) until removed.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from harness.errors import ConfigError

MODES = ("normal", "hang", "hang_mid_stream", "fail", "slow")
DEFAULT_FAIL_STATUS = 500


@dataclass
class Rule:
    """One mode rule; ``healed`` is set when it is removed."""

    rule_id: int
    mode: str
    route: str | None = None
    job_id: str | None = None
    status: int = DEFAULT_FAIL_STATUS
    immediate: bool = True
    factor: float | None = None
    seconds: float | None = None
    remaining: int | None = None  # calls left to decide; None = unlimited
    healed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def specificity(self) -> int:
        """Higher wins: job (2) beats route (1); both (3) beat either."""
        return (2 if self.job_id is not None else 0) + (1 if self.route is not None else 0)

    def matches(self, route: str, job_id: str | None) -> bool:
        """True when this rule may decide a call on ``route`` for ``job_id``."""
        return (
            self.remaining != 0
            and (self.route is None or self.route == route)
            and (self.job_id is None or self.job_id == job_id)
        )

    def adjust_latency(self, latency: float, time_scale: float) -> float:
        """Apply ``seconds`` / ``factor`` to a drawn, already-scaled latency."""
        if self.seconds is not None:
            latency = self.seconds * time_scale
        if self.factor is not None:
            latency *= self.factor
        return latency

    def to_dict(self) -> dict[str, Any]:
        """The JSON form returned by the control API."""
        return {
            "rule_id": self.rule_id, "mode": self.mode, "route": self.route,
            "job_id": self.job_id, "status": self.status, "immediate": self.immediate,
            "factor": self.factor, "seconds": self.seconds, "remaining": self.remaining,
        }


def rule_from_spec(rule_id: int, spec: dict[str, Any]) -> Rule:
    """Validate a control-API rule body; raise ConfigError naming the bad field."""
    known = {"mode", "route", "job_id", "status", "immediate", "factor", "seconds", "count"}
    unknown = set(spec) - known
    if unknown:
        raise ConfigError(f"unknown rule fields {sorted(unknown)}", key=sorted(unknown)[0])
    mode = spec.get("mode")
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {MODES}, got {mode!r}", key="mode")
    if mode == "slow" and spec.get("factor") is None and spec.get("seconds") is None:
        raise ConfigError("slow mode needs 'factor' or 'seconds'", key="factor")
    try:
        rule = Rule(
            rule_id=rule_id,
            mode=mode,
            route=_optional(spec.get("route"), str),
            job_id=_optional(spec.get("job_id"), str),
            status=int(spec.get("status") or DEFAULT_FAIL_STATUS),
            immediate=bool(spec.get("immediate", True)),
            factor=_optional(spec.get("factor"), float),
            seconds=_optional(spec.get("seconds"), float),
            remaining=_optional(spec.get("count"), int),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad rule {spec!r}: {exc}", key="rule") from exc
    if not 100 <= rule.status <= 599:
        raise ConfigError(f"status must be an HTTP status, got {rule.status}", key="status")
    if any(v is not None and v < 0 for v in (rule.factor, rule.seconds, rule.remaining)):
        raise ConfigError("factor, seconds and count must not be negative", key="rule")
    return rule


def _optional(value: Any, kind: type) -> Any:
    return None if value is None else kind(value)


class ModeTable:
    """The active rules, and the choice of the rule that decides a call."""

    def __init__(self) -> None:
        self._rules: dict[int, Rule] = {}
        self._next_id = 1

    def add(self, spec: dict[str, Any]) -> Rule:
        """Validate ``spec`` and add it as a new rule."""
        rule = rule_from_spec(self._next_id, spec)
        self._next_id += 1
        self._rules[rule.rule_id] = rule
        return rule

    def choose(self, route: str, job_id: str | None) -> Rule | None:
        """The rule deciding this call (spending one of its count), or None for normal."""
        candidates = [r for r in self._rules.values() if r.matches(route, job_id)]
        if not candidates:
            return None
        # rule ids grow, so the id breaks ties in favour of the rule added last
        winner = max(candidates, key=lambda r: (r.specificity, r.rule_id))
        if winner.remaining is not None:
            winner.remaining -= 1
        return winner

    def remove(self, rule_id: int) -> Rule | None:
        """Remove a rule and answer the calls it hangs; None if there is no such rule."""
        rule = self._rules.pop(rule_id, None)
        if rule is not None:
            rule.healed.set()
        return rule

    def clear(self) -> None:
        """Remove every rule."""
        for rule_id in list(self._rules):
            self.remove(rule_id)

    def rules(self) -> list[Rule]:
        """The rules, oldest first."""
        return list(self._rules.values())
