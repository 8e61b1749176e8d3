"""A paid call's timeout, as each HTTP library holds it: read, and scaled where config says so.

Timeouts written in the app's code (``timeout=45`` in a call, the openai
client's own 600 s default) are production seconds, which a run at
``time_scale`` 0.01 never reaches: ``scale_paid_call_timeouts`` lists such
values, and a paid call whose timeout (or a part of it: read, write, pool)
is one of them gets it times ``time_scale``. Values the app reads from a
variable jobquake already scaled are not listed, so nothing is scaled twice.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable

NONE = "none"  # the header's value for a call sent without any read timeout
# a scaled paid-call timeout is never shorter: the fake's calls take tens of milliseconds at 0.01, but a
# fault that must land while a call is held (a kill mid-call) needs the harness to act within the
# timeout, and on a busy machine that takes more than a few hundred milliseconds
AT_LEAST_S = 2.0


class TimeoutPolicy:
    """Which timeouts to scale, and by how much."""

    def __init__(self, time_scale: float = 1.0, production: Iterable[float] = ()):
        self.time_scale = time_scale
        self.production = tuple(float(v) for v in production)

    def scaled(self, seconds: Any) -> Any:
        """``seconds`` in the run's time when it is one of the listed production values."""
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and \
                any(math.isclose(seconds, v, rel_tol=1e-9, abs_tol=1e-9) for v in self.production):
            return max(seconds * self.time_scale, min(AT_LEAST_S, seconds))
        return seconds

    # -- per library: (the new timeout to send, the app's read timeout, the effective one) --
    def httpx(self, timeout: Any) -> tuple[Any, Any, Any]:
        """httpx's request extension: ``{"connect", "read", "write", "pool"}``."""
        if not isinstance(timeout, dict):
            return timeout, None, None
        new = {part: self.scaled(value) for part, value in timeout.items()}
        return new, timeout.get("read"), new.get("read")

    def requests(self, timeout: Any) -> tuple[Any, Any, Any]:
        """requests' ``timeout``: seconds, ``(connect, read)``, or None (no timeout at all)."""
        if isinstance(timeout, tuple) and len(timeout) == 2:
            new = (timeout[0], self.scaled(timeout[1]))
            return new, timeout[1], new[1]
        new = self.scaled(timeout)
        return new, timeout, new

    def aiohttp(self, timeout: Any) -> tuple[Any, Any, Any]:
        """aiohttp's ``ClientTimeout`` (``total``, ``sock_read``...); its read bound is the smaller."""
        if isinstance(timeout, (int, float)):
            new = self.scaled(timeout)
            return new, timeout, new
        names = _field_names(timeout)
        if not names:
            return timeout, None, None
        parts = {name: getattr(timeout, name) for name in names}
        new = type(timeout)(**{**parts, **{name: self.scaled(parts[name]) for name in ("total", "sock_read")
                                           if name in parts}})
        return new, _bound(timeout), _bound(new)


def _field_names(value: Any) -> list[str]:
    """The fields of an attrs class (aiohttp's ``ClientTimeout``) or a dataclass."""
    if hasattr(value, "__attrs_attrs__"):
        return [a.name for a in value.__attrs_attrs__]
    if dataclasses.is_dataclass(value):
        return [f.name for f in dataclasses.fields(value)]
    return []


def _bound(timeout: Any) -> Any:
    values = [v for v in (getattr(timeout, "total", None), getattr(timeout, "sock_read", None)) if v]
    return min(values) if values else None


def header(seconds: Any) -> str:
    """A timeout as the header carries it."""
    return NONE if seconds is None else f"{float(seconds):g}"
