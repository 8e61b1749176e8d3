"""Factories for one service at a time, for the contract tests."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness._ports import free_port, release_port
from harness.stack.paidapi import PaidAPIService
from harness.stack.postgres import PostgresService
from harness.stack.proxy import ProxyService
from harness.stack.redis import RedisService
from harness.stack.sqs import QueueSpec, SQSService
from tests.common.runs import per_test_run


def localstack_sqs(workdir: Path):
    """LocalStack serving SQS, or a skip where it is not installed (CI installs it)."""
    from harness.stack.localstack import LocalStackSQS, localstack_installed

    if not localstack_installed():
        pytest.skip("LocalStack is not installed: pip install 'jobquake[localstack]'")
    return LocalStackSQS("sqs", port=free_port(), workdir=workdir,
                         queues=[QueueSpec("dlq"), QueueSpec("jobs", 5, "dlq", 3)])


FACTORIES = {
    "redis": lambda d: RedisService("redis", port=free_port(), workdir=d),
    "postgres": lambda d: PostgresService("postgres", port=free_port(), workdir=d),
    "sqs": lambda d: SQSService("sqs", port=free_port(), workdir=d,
                                queues=[QueueSpec("dlq"), QueueSpec("jobs", 5, "dlq", 3)]),
    "sqs-localstack": localstack_sqs,
    "paidapi": lambda d: PaidAPIService("paidapi", port=free_port(), workdir=d, seed=1, time_scale=0.01),
    "proxy": lambda d: ProxyService("proxy", port=free_port(), workdir=d, seed=1),
}


@pytest.fixture(params=sorted(FACTORIES))
def service(request: pytest.FixtureRequest, tmp_path: Path):
    svc = FACTORIES[request.param](tmp_path)
    svc.start()
    yield svc
    svc.stop()
    if isinstance(svc, PostgresService):
        svc.remove_data()
    release_port(svc.port)


def alive(pid: int) -> bool:
    """True if ``pid`` runs (a zombie is dead)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def family(pid: int) -> list[int]:
    """``pid`` and every live descendant (some servers, like Postgres, setsid their children)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        if alive(current):
            found.append(current)
        todo.extend(children.get(current, []))
    return found


@pytest.fixture(scope="session")
def tiny_stack():
    """The whole stack (Redis, Postgres, SQS, paid API, proxy, one worker) running the tiny app."""
    from tests.integration.tiny import tiny_stack as make

    stack = make()
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture
def tiny(tiny_stack, tmp_path):
    """A per-test Run on the tiny stack: reset world, own history and artifacts."""
    with per_test_run(tiny_stack, tmp_path / "artifacts", "tiny") as run:
        yield run
