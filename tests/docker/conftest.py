"""Fixtures of the docker backend's tests: a backend, services, a stack (or a skip that says why).

Where no Docker engine answers, or the jobquake/* images are not built, the
tests that need them skip with the reason; with JOBQUAKE_REQUIRE_DOCKER=1
or CI=true they fail instead (``tests/common/docker.py``).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.stack.docker import DockerBackend
from tests.common.docker import docker_client, docker_config  # noqa: F401 - fixtures
from tests.common.runs import per_test_run
from tests.common.services import FACTORIES, discard


@pytest.fixture
def backend(docker_config, docker_client):
    """A docker backend whose containers are all removed at the end of the test."""
    made = DockerBackend(docker_config)
    yield made
    made.close()


@pytest.fixture(params=sorted(FACTORIES))
def service(request: pytest.FixtureRequest, backend, tmp_path: Path):
    """Each infrastructure service as a started container."""
    svc = FACTORIES[request.param](backend, tmp_path)
    svc.start()
    yield svc
    discard(svc)


@pytest.fixture(scope="session")
def docker_tiny_stack(docker_client):
    """The tiny app's whole stack, every service a container."""
    from tests.common.tiny import tiny_stack as make

    stack = make(backend="docker")
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture
def tiny(docker_tiny_stack, tmp_path):
    """A per-test Run on the docker stack: reset world, own history and artifacts."""
    with per_test_run(docker_tiny_stack, tmp_path / "artifacts", "tiny-docker") as run:
        yield run
