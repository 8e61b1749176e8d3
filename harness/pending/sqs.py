"""What the SQS queues still hold: visible, in-flight and delayed messages, and their dead letters.

Read with the queue attributes every SQS implementation keeps
(``ApproximateNumberOfMessages`` = visible, ``...NotVisible`` = received
and neither deleted nor back yet, ``...Delayed`` = sent with a delay);
"approximate" is exact on the single-node servers the harness runs. A
queue named as another queue's ``deadLetterTargetArn`` is a dead-letter
queue: messages parked there are reported but not waited for (nothing
consumes them unless the app does), while its in-flight and delayed ones
are (someone is reading it). The client is whatever the stack hands over
(moto, LocalStack or real SQS): only the public API is used.
"""
from __future__ import annotations

import json
from typing import Any

from harness.pending.item import PendingWork

COUNTS = {
    "ApproximateNumberOfMessages": "visible message(s)",
    "ApproximateNumberOfMessagesNotVisible": "in-flight message(s)",
    "ApproximateNumberOfMessagesDelayed": "delayed message(s)",
}
VISIBLE = "ApproximateNumberOfMessages"
READ_ONLY = {"QueueArn", "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
             "ApproximateNumberOfMessagesDelayed", "CreatedTimestamp", "LastModifiedTimestamp"}


def queue_urls(client: Any) -> list[str]:
    """Every queue the server has (the app may create its own; config need not list them)."""
    return sorted(client.list_queues().get("QueueUrls", []))


def _attributes(client: Any, urls: list[str]) -> dict[str, dict[str, str]]:
    return {url: client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]).get("Attributes", {})
            for url in urls}


def _dead_letter_arns(attributes: dict[str, dict[str, str]]) -> set[str]:
    arns = set()
    for attrs in attributes.values():
        policy = attrs.get("RedrivePolicy")
        if policy:
            arns.add(json.loads(policy).get("deadLetterTargetArn", ""))
    return arns


def read_sqs(client: Any) -> list[PendingWork]:
    """One item per queue and kind of message still there."""
    attributes = _attributes(client, queue_urls(client))
    dead_letter = _dead_letter_arns(attributes)
    items = []
    for url, attrs in attributes.items():
        name = url.rstrip("/").rsplit("/", 1)[-1]
        is_dlq = attrs.get("QueueArn") in dead_letter
        where = f"sqs {'dead-letter queue' if is_dlq else 'queue'} {name!r}"
        for attribute, kind in COUNTS.items():
            count = int(attrs.get(attribute, 0) or 0)
            if count:
                items.append(PendingWork(kind, where, count, blocks=not (is_dlq and attribute == VISIBLE)))
    return items


def _recreate(client: Any, url: str) -> None:
    """Delete and recreate a queue with the same settings (a purge may be refused for 60 s)."""
    attrs = client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]).get("Attributes", {})
    name = url.rstrip("/").rsplit("/", 1)[-1]
    client.delete_queue(QueueUrl=url)
    client.create_queue(QueueName=name, Attributes={k: v for k, v in attrs.items() if k not in READ_ONLY})


def purge_sqs(client: Any) -> list[str]:
    """Empty every queue, in-flight and delayed messages included; the names emptied."""
    from botocore.exceptions import ClientError

    emptied = []
    for url in queue_urls(client):
        try:
            client.purge_queue(QueueUrl=url)
        except ClientError:
            _recreate(client, url)
        emptied.append(url.rstrip("/").rsplit("/", 1)[-1])
    return emptied
