"""The contract suites run once per backend: ``backend`` is "process" or "docker".

The docker cases skip with the reason where no engine answers or the images
are not built, and fail instead where JOBQUAKE_REQUIRE_DOCKER=1 or CI=true.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import resolve
from harness.stack.backends import ProcessBackend
from harness.stack.docker import DockerBackend
from tests.common.docker import docker_client, docker_config  # noqa: F401 - fixtures
from tests.common.services import FACTORIES, discard


@pytest.fixture(scope="session", params=["process", "docker"])
def backend(request: pytest.FixtureRequest):
    """Each backend, with every container it made removed at the end."""
    if request.param == "process":
        yield ProcessBackend(resolve(cli={}, environ={}))
        return
    request.getfixturevalue("docker_client")  # skips (or fails in CI) without an engine and images
    made = DockerBackend(request.getfixturevalue("docker_config"))
    yield made
    made.close()


@pytest.fixture(params=sorted(FACTORIES))
def service(request: pytest.FixtureRequest, backend, tmp_path: Path):
    """Each infrastructure service, started on the backend."""
    svc = FACTORIES[request.param](backend, tmp_path)
    svc.start()
    yield svc
    discard(svc)
