"""How long the fake provider takes to answer: a capped lognormal latency profile.

The default profile is fitted to the production figures of the model calls
jobquake was built for: median ~5.5 s, p99 ~35 s, slowest ~11 min. A
lognormal is fixed by two quantiles: ``median = exp(mu)`` and
``p99 = exp(mu + z99 * sigma)``, so ``mu = ln(median)`` and
``sigma = ln(p99 / median) / z99``. The cap keeps a freak draw from
exceeding the slowest call ever seen.

Values are real seconds; the server multiplies them by its time scale.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from harness.errors import ConfigError

DEFAULT_MEDIAN = 5.5  # seconds, production median of a model call
DEFAULT_P99 = 35.0  # seconds, production p99
DEFAULT_MAX = 660.0  # seconds, slowest call seen in production (11 min)

Z99 = NormalDist().inv_cdf(0.99)  # ~2.326: standard normal 99th percentile


@dataclass(frozen=True)
class LatencyProfile:
    """A lognormal with the given median and p99, capped at ``maximum`` (real seconds).

    ``p99 == median`` gives a fixed latency (sigma 0), which tests use to
    make timing exact.
    """

    median: float
    p99: float
    maximum: float
    name: str = "custom"

    def __post_init__(self) -> None:
        if self.median < 0 or self.p99 < self.median or self.maximum < self.median:
            raise ConfigError(
                f"latency profile needs 0 <= median <= p99 and median <= max, got "
                f"median={self.median} p99={self.p99} max={self.maximum}",
                key="profile",
            )
        if self.median == 0 and self.p99 > 0:
            raise ConfigError("a lognormal profile needs median > 0", key="profile")

    @property
    def mu(self) -> float:
        """Location of the underlying normal: ln(median)."""
        return math.log(self.median) if self.median > 0 else -math.inf

    @property
    def sigma(self) -> float:
        """Spread of the underlying normal, solved from the p99."""
        if self.p99 == self.median:
            return 0.0
        return math.log(self.p99 / self.median) / Z99

    @property
    def is_fixed(self) -> bool:
        """True when every sample is the same value."""
        return self.sigma == 0.0

    def sample(self, rng: random.Random) -> float:
        """Draw one latency in real seconds (not yet time-scaled)."""
        if self.is_fixed:
            return min(self.median, self.maximum)
        return min(rng.lognormvariate(self.mu, self.sigma), self.maximum)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form returned by the settings API."""
        return {"name": self.name, "median": self.median, "p99": self.p99, "max": self.maximum}

    @classmethod
    def default(cls) -> LatencyProfile:
        """The production-fitted profile."""
        return cls(DEFAULT_MEDIAN, DEFAULT_P99, DEFAULT_MAX, name="default")

    @classmethod
    def fixed(cls, seconds: float) -> LatencyProfile:
        """Every call takes exactly ``seconds`` (real seconds)."""
        return cls(seconds, seconds, seconds, name=f"fixed:{seconds:g}")

    @classmethod
    def named(cls, name: str) -> LatencyProfile:
        """Resolve ``"default"`` or ``"fixed:<seconds>"``."""
        if name == "default":
            return cls.default()
        if name.startswith("fixed:"):
            try:
                seconds = float(name.removeprefix("fixed:"))
            except ValueError:
                seconds = math.nan
            if not seconds >= 0:  # also rejects NaN
                raise ConfigError(f"bad fixed latency in profile {name!r}", key="profile")
            return cls.fixed(seconds)
        raise ConfigError(
            f"unknown latency profile {name!r} (expected 'default' or 'fixed:<seconds>')",
            key="profile",
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any] | str) -> LatencyProfile:
        """Build from a name or from ``{"median", "p99", "max"}`` (``"name"`` optional)."""
        if isinstance(data, str):
            return cls.named(data)
        if set(data) <= {"name"} and "name" in data:
            return cls.named(str(data["name"]))
        try:
            return cls(
                float(data["median"]),
                float(data["p99"]),
                float(data.get("max", DEFAULT_MAX)),
                name=str(data.get("name", "custom")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"bad latency profile {data!r}: {exc}", key="profile") from exc
