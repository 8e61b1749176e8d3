"""What the SQS scenarios rely on, checked the same way against moto and LocalStack.

Configured queues with their redrive policy, a message that moves to the
dead-letter queue after ``max_receives`` deliveries, a visibility timeout
that hides a received message, and a reset that leaves only the configured
queues, empty. On both backends (``backend``: process, docker).
"""
from __future__ import annotations

import json

import pytest

from harness._ports import free_port, release_port
from harness._wait import wait_until
from harness.errors import ServiceError
from harness.stack.localstack import LocalStackSQS, localstack_installed
from tests.common.services import NO_LOCALSTACK, discard, sqs_server as make_sqs

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=["moto", "localstack"])
def sqs_server(request, backend, tmp_path_factory):
    svc = make_sqs(backend, request.param, tmp_path_factory.mktemp(request.param))
    svc.start()
    yield svc
    discard(svc)


@pytest.fixture
def sqs(sqs_server):
    """The module's server, reset as a test's set-up resets it."""
    sqs_server.reset()
    return sqs_server


def test_configured_queues_exist_with_their_redrive_policy(sqs):
    client = sqs.client()
    attrs = client.get_queue_attributes(QueueUrl=sqs.queue_url("jobs"), AttributeNames=["All"])["Attributes"]
    policy = json.loads(attrs["RedrivePolicy"])
    assert attrs["VisibilityTimeout"] == "5"
    assert policy["deadLetterTargetArn"].endswith(":dlq")
    assert int(policy["maxReceiveCount"]) == 3


def test_a_received_message_is_hidden_for_its_visibility_timeout(sqs):
    client, url = sqs.client(), sqs.queue_url("jobs")
    client.send_message(QueueUrl=url, MessageBody="m")
    first = client.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
    assert client.receive_message(QueueUrl=url, WaitTimeSeconds=0).get("Messages") is None
    client.change_message_visibility(QueueUrl=url, ReceiptHandle=first[0]["ReceiptHandle"], VisibilityTimeout=0)
    again = client.receive_message(QueueUrl=url, WaitTimeSeconds=1, AttributeNames=["ApproximateReceiveCount"])
    assert again["Messages"][0]["Attributes"]["ApproximateReceiveCount"] == "2"


def test_a_message_moves_to_the_dead_letter_queue_after_max_receives(sqs):
    client, url, dlq = sqs.client(), sqs.queue_url("jobs"), sqs.queue_url("dlq")
    client.send_message(QueueUrl=url, MessageBody="poison")
    for _ in range(3):  # each delivery handed straight back, as a failing consumer does
        got = client.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"][0]
        client.change_message_visibility(QueueUrl=url, ReceiptHandle=got["ReceiptHandle"], VisibilityTimeout=0)
    assert client.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages") is None
    moved = client.receive_message(QueueUrl=dlq, WaitTimeSeconds=1)["Messages"]
    assert [m["Body"] for m in moved] == ["poison"]


def test_reset_leaves_only_the_configured_queues_and_no_message(sqs):
    client = sqs.client()
    client.create_queue(QueueName="made-by-the-app")
    client.send_message(QueueUrl=sqs.queue_url("jobs"), MessageBody="left over")
    sqs.reset()
    names = sorted(url.rsplit("/", 1)[1] for url in client.list_queues().get("QueueUrls", []))
    assert names == ["dlq", "jobs"]
    assert client.receive_message(QueueUrl=sqs.queue_url("jobs"), WaitTimeSeconds=0).get("Messages") is None
    policy = client.get_queue_attributes(QueueUrl=sqs.queue_url("jobs"), AttributeNames=["RedrivePolicy"])
    assert json.loads(policy["Attributes"]["RedrivePolicy"])["maxReceiveCount"] in (3, "3")


def test_localstack_not_serving_sqs_in_time_fails_with_its_log_tail(tmp_path):
    if not localstack_installed():
        pytest.skip(NO_LOCALSTACK)
    svc = LocalStackSQS("sqs", port=free_port(), workdir=tmp_path, env={"SERVICES": "s3"})  # runs, SQS disabled
    svc.start_timeout = 10.0
    with pytest.raises(ServiceError) as caught:
        svc.start()
    text = str(caught.value)
    assert "did not become ready" in text and "LocalStack (SQS)" in text
    assert "LocalStack version" in caught.value.log_tail
    assert any("LocalStack version" in note for note in caught.value.__notes__)  # shown with the error
    wait_until(lambda: not svc.is_running(), timeout=5, what="failed LocalStack gone")
    release_port(svc.port)
