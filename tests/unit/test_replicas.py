"""Replicas of an app process: config's ``replicas``, the marker's, and how they are named."""
from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.markers import ScenarioOptions, jobquake_problems
from harness.stack.stack import replica_names, replicas_of


def test_replicas_are_the_process_then_numbered_from_two():
    assert replica_names("sweeper", 1) == ["sweeper"]
    assert replica_names("sweeper", 3) == ["sweeper", "sweeper-2", "sweeper-3"]


def test_config_asks_one_replica_unless_it_says_more():
    assert replicas_of("relay", {"command": "python -m app.relay"}) == 1
    assert replicas_of("relay", {"command": "python -m app.relay", "replicas": 2}) == 2


@pytest.mark.parametrize("bad", [0, 9, "2", True, 1.5])
def test_a_replica_count_out_of_range_names_the_process_and_the_range(bad):
    with pytest.raises(ConfigError, match=r"processes\.relay\.replicas: expected a whole number from 1 to 8"):
        replicas_of("relay", {"command": "x", "replicas": bad})


def test_the_marker_asks_replicas_for_one_test():
    assert ScenarioOptions.from_kwargs({"replicas": {"sweeper": 2}}).replicas == {"sweeper": 2}
    assert ScenarioOptions.from_kwargs({}).replicas == {}
    assert jobquake_problems({"replicas": {"sweeper": 2}}) == []
    assert jobquake_problems({"replicas": {"sweeper": 0}}) == [
        "jobquake(replicas=...): expected {process: count >= 1}, got {'sweeper': 0}"]
