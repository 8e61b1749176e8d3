"""The one place that decides how the harness builds an SQS client, for moto or for LocalStack.

For LocalStack the client comes from ``localstack-client``, whose session
is made for it (LocalStack's host and port, its test credentials, TLS
verification off for its self-signed certificate); for moto it is plain
boto3 pointed at the server's endpoint. Both are ordinary boto3 clients,
so code using them does not care which server answers.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.config import Config as BotoConfig

REGION = "us-east-1"
# any credentials do for both servers; fixed ones keep boto3 from searching the machine for real ones
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
SQS_SERVICES = ("moto", "localstack")
# the harness's own calls (queue set-up, resets) answer in milliseconds: a hung server fails them in
# seconds rather than boto3's default minute; a readiness probe fails at once and is simply asked again
HARNESS_CALLS = BotoConfig(connect_timeout=2, read_timeout=10)
PROBE = BotoConfig(connect_timeout=1, read_timeout=2, retries={"total_max_attempts": 1})


def sqs_client(endpoint_url: str, service: str = "moto", config: BotoConfig | None = HARNESS_CALLS) -> Any:
    """A boto3 SQS client for the server at ``endpoint_url``; ``service`` is "moto" or "localstack"."""
    if service == "localstack":
        return _localstack_client(endpoint_url, config)
    if service == "moto":
        return boto3.client("sqs", endpoint_url=endpoint_url, region_name=REGION, config=config, **CREDENTIALS)
    raise ValueError(f"unknown SQS service {service!r}; choose from {', '.join(SQS_SERVICES)}")


def _localstack_client(endpoint_url: str, config: BotoConfig | None) -> Any:
    from localstack_client.session import Session

    parts = urlsplit(endpoint_url)
    session = Session(region_name=REGION, localstack_host=f"{parts.hostname}:{parts.port}", **CREDENTIALS)
    return session.client("sqs", config=config)
