"""The latency profile reproduces the production figures it was fitted to."""
from __future__ import annotations

import math
import random

import pytest

from harness.errors import ConfigError
from harness.paidapi.profile import LatencyProfile

SAMPLES = 100_000


def quantile(sorted_values: list[float], q: float) -> float:
    return sorted_values[int(q * (len(sorted_values) - 1))]


def test_default_profile_solves_mu_and_sigma_from_median_and_p99() -> None:
    profile = LatencyProfile.default()
    assert profile.mu == pytest.approx(math.log(5.5))
    # exp(mu + z99 * sigma) must give back the p99
    assert math.exp(profile.mu + 2.3263478740 * profile.sigma) == pytest.approx(35.0, rel=1e-6)
    assert profile.maximum == 660.0


def test_samples_have_the_production_median_and_p99() -> None:
    rng = random.Random(20240601)
    draws = sorted(LatencyProfile.default().sample(rng) for _ in range(SAMPLES))
    # standard errors at this size: ~0.3 % for the median, ~1 % for the p99
    assert quantile(draws, 0.5) == pytest.approx(5.5, rel=0.02)
    assert quantile(draws, 0.99) == pytest.approx(35.0, rel=0.05)
    assert draws[-1] <= 660.0
    assert draws[0] > 0


def test_samples_never_exceed_the_cap() -> None:
    # a wide profile with a low cap: many draws land above it
    profile = LatencyProfile(median=1.0, p99=100.0, maximum=5.0)
    rng = random.Random(3)
    draws = [profile.sample(rng) for _ in range(2000)]
    assert max(draws) == 5.0
    assert sum(d == 5.0 for d in draws) > 100


def test_same_seed_same_latencies_other_seed_others() -> None:
    profile = LatencyProfile.default()

    def run(seed: int) -> list[float]:
        rng = random.Random(seed)
        return [profile.sample(rng) for _ in range(50)]

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_fixed_profile_always_gives_its_value() -> None:
    profile = LatencyProfile.named("fixed:2.5")
    rng = random.Random(1)
    assert {profile.sample(rng) for _ in range(100)} == {2.5}
    assert profile.is_fixed
    assert LatencyProfile.named("fixed:0").sample(rng) == 0.0


@pytest.mark.parametrize("name", ["fast", "fixed:", "fixed:-1", "fixed:abc", "fixed:nan"])
def test_bad_profile_names_are_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="profile"):
        LatencyProfile.named(name)


def test_from_dict_accepts_a_name_or_the_three_figures() -> None:
    assert LatencyProfile.from_dict("default") == LatencyProfile.default()
    assert LatencyProfile.from_dict({"name": "fixed:3"}).median == 3.0
    custom = LatencyProfile.from_dict({"median": 1, "p99": 4, "max": 10})
    assert (custom.median, custom.p99, custom.maximum) == (1.0, 4.0, 10.0)
    assert LatencyProfile.from_dict(custom.to_dict()) == custom


@pytest.mark.parametrize("figures", [
    {"median": 5, "p99": 1},  # p99 below the median
    {"median": 5, "p99": 10, "max": 2},  # cap below the median
    {"median": 0, "p99": 10},  # no lognormal has median 0
    {"p99": 10},  # median missing
])
def test_inconsistent_figures_are_refused(figures: dict) -> None:
    with pytest.raises(ConfigError):
        LatencyProfile.from_dict(figures)
