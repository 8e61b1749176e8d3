"""The docker backend for tests: a configuration, and an engine holding its images, or a skip that says why.

Where no Docker engine answers, or the jobquake/* images are not built, the
tests that need them skip with the reason; with JOBQUAKE_REQUIRE_DOCKER=1
or CI=true (as CI sets them) they fail instead. Conftests import the fixtures by name.
"""
from __future__ import annotations

import os
from typing import Any, NoReturn

import pytest

from harness.config import OPTIONS, Config, resolve
from harness.stack.docker import DockerBackend
from harness.stack.engine import EngineUnavailable

REQUIRE_VAR = "JOBQUAKE_REQUIRE_DOCKER"
IMAGE_KEYS = [opt.key for opt in OPTIONS if opt.key.startswith("docker_") and opt.key.endswith("_image")]


def required() -> bool:
    """Docker tests are mandatory where the environment says so (CI does)."""
    return os.environ.get(REQUIRE_VAR) == "1" or os.environ.get("CI", "").lower() == "true"


def unavailable(reason: str) -> NoReturn:
    """Skip the test, or fail it where docker is required."""
    if required():
        pytest.fail(f"{REQUIRE_VAR}=1 or CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def answering_client(config: Config) -> Any:
    """A client of an engine that answers and holds every image the backend uses, or skip (fail)."""
    try:
        client = DockerBackend(config).engine.client()
    except EngineUnavailable as exc:
        unavailable(exc.reason)
    present = {tag for image in client.images.list() for tag in image.tags}
    missing = [config.values[key] for key in IMAGE_KEYS
               if config.values[key] not in present and f"{config.values[key]}:latest" not in present]
    if missing:
        unavailable(f"images {missing} are not built: run scripts/build-images.sh")
    return client


@pytest.fixture(scope="session")
def docker_config() -> Config:
    return resolve(cli={"backend": "docker"}, environ={})


@pytest.fixture(scope="session")
def docker_client(docker_config):
    """A client of an answering engine that holds every image the backend uses."""
    return answering_client(docker_config)
