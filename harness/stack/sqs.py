"""SQS as a local process: moto's server, with the app's queues created from config.

moto implements what the SQS scenarios need: visibility timeouts,
ChangeMessageVisibility, ApproximateReceiveCount and a RedrivePolicy that
moves a message to its dead-letter queue. ``localstack.py`` serves the same
with LocalStack (config ``sqs``); ``sqs_clients.py`` builds either's clients.
"""
from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.stack.probe_http import probe_client
from harness.stack.process import ProcessService
from harness.stack.sqs_clients import CREDENTIALS, REGION, sqs_client  # noqa: F401 - re-exported


@dataclass(frozen=True)
class QueueSpec:
    """A queue to create: visibility timeout (s), and a dead-letter queue after max_receives."""

    name: str
    visibility_timeout: int = 30
    dead_letter: str | None = None
    max_receives: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "QueueSpec":
        return cls(**data)


LAUNCHER = Path(__file__).with_name("moto_main.py")  # moto's SQS alone: cheaper per request than moto.server


class SQSService(ProcessService):
    """moto's SQS on loopback (``moto_main.py``); ``reset()`` wipes all state and recreates the queues."""

    scheme = "http"
    start_timeout = 20.0
    sqs_service = "moto"  # which server answers: decides how its clients are built
    port_handover = True

    def __init__(self, *args, queues: list[QueueSpec] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.queues = list(queues or [])
        self._client: tuple[str, Any] | None = None  # (address, client) of the last client made
        self._client_lock = threading.Lock()

    def command(self) -> list[str]:
        cmd = [sys.executable, str(LAUNCHER), "-H", self.host, "-p", str(self.port)]
        return cmd + ["--fd", self.listen_fd()] if self.port_handover else cmd

    @property
    def endpoint_url(self) -> str:
        return self.url

    def client(self):
        """The harness's SQS client for this server, made once per address.

        Making a boto3 client costs ~10 ms of CPU, and the harness asks for
        one in every test's reset, settle and isolation; a client is safe to
        share between threads.
        """
        with self._client_lock:
            if self._client is None or self._client[0] != self.url:
                self._client = (self.url, sqs_client(self.url, self.sqs_service))
            return self._client[1]

    def probe(self) -> bool:
        return probe_client().get(f"{self.url}/moto-api/").status_code == 200

    def after_ready(self) -> None:
        self.create_queues()

    def create_queues(self) -> None:
        sqs = self.client()
        # dead-letter queues first: a redrive policy names its target's ARN
        for spec in sorted(self.queues, key=lambda q: q.dead_letter is not None):
            attributes = {"VisibilityTimeout": str(spec.visibility_timeout)}
            if spec.dead_letter:
                dlq_url = sqs.get_queue_url(QueueName=spec.dead_letter)["QueueUrl"]
                dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])[
                    "Attributes"]["QueueArn"]
                attributes["RedrivePolicy"] = json.dumps(
                    {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(spec.max_receives or 1)})
            sqs.create_queue(QueueName=spec.name, Attributes=attributes)

    def queue_url(self, name: str) -> str:
        return self.client().get_queue_url(QueueName=name)["QueueUrl"]

    def reset(self) -> None:
        """Forget every queue and message, then recreate the configured queues."""
        probe_client().post(f"{self.url}/moto-api/reset", timeout=5.0).raise_for_status()
        self.create_queues()
