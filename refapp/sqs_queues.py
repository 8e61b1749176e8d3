"""The SQS queues of the SQS path: the job queue, its dead-letter queue, and the redrive rule.

The rule that matters: the queue gives up on a message later than the code
does. The consumer fails a job itself once a message has been delivered more
than ``max_attempts`` times; with ``maxReceiveCount = max_attempts + 2`` that
delivery still reaches the code, even after one duplicate delivery (the
message came back while its attempt still ran: a renewal was late). Equal
limits let the queue move the message to the dead-letter queue first, and
the job sits in "queued" forever. Whoever touches the queues first (consumer or relay)
creates them and sets that policy; the consumer re-checks it at start.
"""
from __future__ import annotations

import json
import os
from typing import Any

import boto3

from refapp import budgets, settings
from refapp.mutants import mutant

_clients: dict[int, Any] = {}
_urls: dict[tuple[int, str], str] = {}


def max_receives() -> int:
    """The queue's delivery limit before the dead-letter queue."""
    if mutant("dlq-before-code-limit"):
        return settings.get().max_attempts  # the wrong shape: the queue counts first
    return settings.get().max_attempts + 2  # the code's give-up delivery, and room for one duplicate


def client() -> Any:
    """This process's SQS client (thread-safe; one per pid)."""
    found = _clients.get(os.getpid())
    if found is None:
        config = settings.get()
        found = boto3.client(
            "sqs", endpoint_url=config.sqs_endpoint, region_name=config.sqs_region,
            aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
            aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
        )
        _clients[os.getpid()] = found
    return found


def ensure_queues() -> str:
    """Create the queues if needed, make the redrive policy what the code requires; the job queue's URL."""
    sqs, config = client(), settings.get()
    dlq_url = sqs.create_queue(QueueName=f"{config.sqs_queue}-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    attributes = {
        "VisibilityTimeout": str(visibility_seconds()),
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receives())}),
    }
    url = sqs.create_queue(QueueName=config.sqs_queue)["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)
    _urls[(os.getpid(), config.sqs_queue)] = url
    return url


def redrive_limit(url: str) -> int | None:
    """The maxReceiveCount the queue at ``url`` really has."""
    attrs = client().get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]
    policy = attrs.get("RedrivePolicy")
    return int(json.loads(policy)["maxReceiveCount"]) if policy else None


def queue_url() -> str:
    """The job queue's URL, creating the queues on first use."""
    found = _urls.get((os.getpid(), settings.get().sqs_queue))
    return found if found is not None else ensure_queues()


def is_missing_queue(exc: Exception) -> bool:
    """True for the error SQS gives when the queue does not exist (e.g. after a reset)."""
    code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
    return "NonExistentQueue" in code or "QueueDoesNotExist" in code


def send(payload: dict[str, Any]) -> None:
    """Put one job message on the queue."""
    body = json.dumps(payload)
    try:
        client().send_message(QueueUrl=queue_url(), MessageBody=body)
    except client().exceptions.QueueDoesNotExist:
        client().send_message(QueueUrl=ensure_queues(), MessageBody=body)


def visibility_seconds() -> int:
    """The visibility window in whole seconds (SQS has no finer unit)."""
    return max(1, round(budgets.scaled("sqs_visibility")))
