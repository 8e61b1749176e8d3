"""While Redis or Postgres is down for a fault, another user who takes its address learns no password.

The attack: a fault stops a server, its port is free for a moment and every
local user can see which it was; another user binds it, plays the server, and
the app's clients, reconnecting, send it their password (Redis ``AUTH``; libpq
sends the Postgres password in clear text when asked). The squatter here
watches every port of the stack, binds any the moment it is free, and keeps
what it is sent. Each outage fault runs under it, with the app reconnecting
meanwhile; nothing of ours may ever reach it. The servers listen on no TCP
port (only on private Unix sockets), and the addresses the app reaches them by
belong to the fault proxy, which keeps them bound through the outage.
"""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Iterator

import pytest
from celery import Celery

from harness._wait import wait_until
from harness.faults.services import BROKER_ERRORS, DATABASE_GONE
from harness.stack.stack import Stack
from tests.common.runs import per_test_run
from tests.common.tiny import job_state, submit, tiny_stack

pytestmark = pytest.mark.integration

SQUATTER = (Path(__file__).parent / "squatter.py").read_text()
OUTAGE = 2.0  # seconds the database stays down: the app reconnects meanwhile


@pytest.fixture(scope="module", params=["socket", "proxied"])
def stack(request) -> Iterator[Stack]:
    """The tiny app's stack: the database by its private socket, or through the fault proxy."""
    overrides = {"proxied": "paidapi,postgres"} if request.param == "proxied" else {}
    made = tiny_stack(**overrides)
    made.start()
    yield made
    made.stop()


def stack_ports(stack: Stack) -> list[str]:
    """Every port of the stack: what another user reads in /proc/*/cmdline and /proc/net/tcp."""
    ports = ({svc.port for svc in stack.services()} | set(stack.proxy_ports.values())) - {0}
    return [str(port) for port in sorted(ports)]


def secrets_of(stack: Stack) -> list[str]:
    return [stack.redis.password, stack.postgres.password]


def test_squatting_a_port_during_each_outage_captures_nothing(attacker, stack, tmp_path):
    squatter = attacker.start(SQUATTER, *stack_ports(stack))
    broken: list[str] = []  # a step the squatter made fail: reported after what it collected
    try:
        with per_test_run(stack, tmp_path / "artifacts", "squat") as run:
            for step in (broker_outage, database_restart, stop_redis, stop_postgres, recovered):
                try:
                    step(run)
                except Exception as exc:  # noqa: BLE001 - what the squatter broke, reported below
                    broken.append(f"{step.__name__}: {type(exc).__name__}: {exc}")
    finally:
        squatter.stdin.close()
        found = json.loads(squatter.stdout.read() or "{}")
        squatter.wait(10)
    received = "".join(found.get("received", []))
    leaked = [secret for secret in secrets_of(stack) if secret in received]
    assert not leaked, f"a squatter on our ports collected a password: {found}"
    assert found.get("received") == [], f"a client of ours connected to another user's server: {found}"
    assert broken == []


def worker_logs(run, pattern: str, lines: int = 1):
    """A condition: the worker logged ``lines`` lines matching ``pattern`` since now."""
    worker = run.stack.workers.workers[0]
    offset = worker.log_offset()

    def logged() -> bool:
        return len(re.findall(f"^.*(?:{pattern}).*$", worker.logs_since(offset), re.IGNORECASE | re.MULTILINE)) >= lines
    return logged


def broker_outage(run) -> None:
    """Redis down while the worker reconnects (it sends AUTH with the password on each attempt)."""
    reconnecting = worker_logs(run, BROKER_ERRORS, lines=2)
    outage = run.faults.broker_outage()
    wait_until(reconnecting, timeout=15, what="the worker to try to reconnect to the broker")
    outage.heal()


def database_restart(run) -> None:
    """Postgres down ``OUTAGE`` seconds while the worker runs a task, whose pool reconnects."""
    gone = worker_logs(run, DATABASE_GONE)
    restart = threading.Thread(target=run.faults.database_restart, kwargs={"down_for": OUTAGE})
    restart.start()
    try:
        wait_until(lambda: not run.stack.postgres.is_running(), timeout=10, what="postgres to stop")
        Celery(broker=run.redis_url).send_task("tiny.work", args=["squat-db", True])  # no row: an UPDATE of none
        wait_until(gone, timeout=10, what="the worker to meet the database gone")
    finally:
        restart.join(OUTAGE + 30)


def stop_redis(run) -> None:
    """``stop_service("redis")`` until the worker has tried to reconnect."""
    reconnecting = worker_logs(run, BROKER_ERRORS, lines=2)
    with run.faults.stop_service("redis"):
        wait_until(reconnecting, timeout=15, what="the worker to try to reconnect to the broker")


def stop_postgres(run) -> None:
    """``stop_service("postgres")`` while the worker runs a task."""
    gone = worker_logs(run, DATABASE_GONE)
    with run.faults.stop_service("postgres"):
        Celery(broker=run.redis_url).send_task("tiny.work", args=["squat-stop", True])
        wait_until(gone, timeout=10, what="the worker to meet the database gone")


def recovered(run) -> None:
    """The app works after it all."""
    submit(run, "after-outages")
    wait_until(lambda: job_state(run, "after-outages") == "done", timeout=20, what="the app to recover")
