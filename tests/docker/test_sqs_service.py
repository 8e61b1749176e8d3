"""The SQS checks the process backend passes (moto and LocalStack), on containers."""
from __future__ import annotations

import pytest

from harness._ports import free_port, release_port
from tests.integration.test_sqs_service import (  # noqa: F401 - collected here with the docker fixture
    QUEUES,
    sqs,
    test_a_message_moves_to_the_dead_letter_queue_after_max_receives,
    test_a_received_message_is_hidden_for_its_visibility_timeout,
    test_configured_queues_exist_with_their_redrive_policy,
    test_reset_leaves_only_the_configured_queues_and_no_message,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=["moto", "localstack"])
def sqs_server(request, docker_config, docker_client, tmp_path_factory):
    from harness.stack.docker import DockerBackend

    backend = DockerBackend(docker_config)
    svc = backend.sqs_server(request.param, "sqs", port=free_port(), workdir=tmp_path_factory.mktemp(request.param),
                             queues=list(QUEUES))
    svc.start()
    yield svc
    backend.close()
    release_port(svc.port)
