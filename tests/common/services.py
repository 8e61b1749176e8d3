"""One infrastructure service at a time, made by either backend, for the contract suites."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from harness._ports import free_port, release_port
from harness.stack.localstack import LocalStackSQS, localstack_installed
from harness.stack.postgres import PostgresService
from harness.stack.sqs import QueueSpec, SQSService

QUEUES = [QueueSpec("dlq"), QueueSpec("jobs", 5, "dlq", 3)]
NO_LOCALSTACK = "LocalStack is not installed: pip install 'jobquake[localstack]'"


def sqs_server(backend: Any, server: str, workdir: Path) -> Any:
    """SQS from ``server`` ("moto" or "localstack") on ``backend``, whatever config ``sqs`` says."""
    kw: dict[str, Any] = {"port": free_port(), "workdir": workdir, "queues": list(QUEUES)}
    if backend.name == "docker":
        return backend.sqs_server(server, "sqs", **kw)
    if server == "localstack":
        if not localstack_installed():
            release_port(kw["port"])
            pytest.skip(NO_LOCALSTACK)
        return LocalStackSQS("sqs", **kw)
    return SQSService("sqs", **kw)


FACTORIES: dict[str, Callable[[Any, Path], Any]] = {
    "redis": lambda b, d: b.redis("redis", port=free_port(), workdir=d),
    "postgres": lambda b, d: b.postgres("postgres", port=free_port(), workdir=d),
    "sqs": lambda b, d: sqs_server(b, "moto", d),
    "sqs-localstack": lambda b, d: sqs_server(b, "localstack", d),
    "paidapi": lambda b, d: b.paidapi("paidapi", port=free_port(), workdir=d, seed=1, time_scale=0.01),
    "proxy": lambda b, d: b.proxy("proxy", port=free_port(), workdir=d, seed=1),
}


def discard(svc: Any) -> None:
    """Stop ``svc`` and remove what it keeps after a stop (a data dir, a container), free its port."""
    svc.stop()
    if isinstance(svc, PostgresService):
        svc.remove_data()
    elif hasattr(svc, "remove"):
        svc.remove()
    release_port(svc.port)
