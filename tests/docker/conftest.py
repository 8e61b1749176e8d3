"""Fixtures of the docker backend's tests: an engine (or a skip that says why), services, a stack.

Where no Docker engine answers, or the jobquake/* images are not built, the
tests that need them skip with the reason; with JOBQUAKE_REQUIRE_DOCKER=1
(as CI sets it) they fail instead.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness._ports import free_port, release_port
from harness.config import OPTIONS, resolve
from harness.stack.docker import DockerBackend
from harness.stack.engine import EngineUnavailable
from harness.stack.sqs import QueueSpec
from tests.common.runs import per_test_run

REQUIRE_VAR = "JOBQUAKE_REQUIRE_DOCKER"
IMAGE_KEYS = [opt.key for opt in OPTIONS if opt.key.startswith("docker_") and opt.key.endswith("_image")]


def unavailable(reason: str) -> None:
    """Skip the test, or fail it where docker is required."""
    if os.environ.get(REQUIRE_VAR) == "1":
        pytest.fail(f"{REQUIRE_VAR}=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_config():
    return resolve(cli={"backend": "docker"}, environ={})


@pytest.fixture(scope="session")
def docker_client(docker_config):
    """A client of an answering engine that holds every image the backend uses."""
    backend = DockerBackend(docker_config)
    try:
        client = backend.engine.client()
    except EngineUnavailable as exc:
        unavailable(exc.reason)
    present = {tag for image in client.images.list() for tag in image.tags}
    missing = [docker_config.values[key] for key in IMAGE_KEYS
               if docker_config.values[key] not in present and f"{docker_config.values[key]}:latest" not in present]
    if missing:
        unavailable(f"images {missing} are not built: run scripts/build-images.sh")
    return client


@pytest.fixture
def backend(docker_config, docker_client):
    """A docker backend whose containers are all removed at the end of the test."""
    made = DockerBackend(docker_config)
    yield made
    made.close()


FACTORIES = {
    "redis": lambda b, d: b.redis("redis", port=free_port(), workdir=d),
    "postgres": lambda b, d: b.postgres("postgres", port=free_port(), workdir=d),
    "sqs": lambda b, d: b.sqs("sqs", port=free_port(), workdir=d,
                              queues=[QueueSpec("dlq"), QueueSpec("jobs", 5, "dlq", 3)]),
    "sqs-localstack": lambda b, d: b.sqs_server("localstack", "sqs", port=free_port(), workdir=d,
                                                queues=[QueueSpec("dlq"), QueueSpec("jobs", 5, "dlq", 3)]),
    "paidapi": lambda b, d: b.paidapi("paidapi", port=free_port(), workdir=d, seed=1, time_scale=0.01),
    "proxy": lambda b, d: b.proxy("proxy", port=free_port(), workdir=d, seed=1),
}


@pytest.fixture(params=sorted(FACTORIES))
def service(request: pytest.FixtureRequest, backend, tmp_path: Path):
    """Each infrastructure service as a started container (the contract tests' fixture)."""
    svc = FACTORIES[request.param](backend, tmp_path)
    svc.start()
    yield svc
    svc.stop()
    svc.remove()
    release_port(svc.port)


@pytest.fixture(scope="session")
def docker_tiny_stack(docker_client):
    """The tiny app's whole stack, every service a container."""
    from tests.integration.tiny import tiny_stack as make

    stack = make(backend="docker")
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture
def tiny(docker_tiny_stack, tmp_path):
    """A per-test Run on the docker stack: reset world, own history and artifacts."""
    with per_test_run(docker_tiny_stack, tmp_path / "artifacts", "tiny-docker") as run:
        yield run
